/* cmd_log.c — `airlock log`: prints the audit log for people, filtered, summarised or as its raw lines; follows it. */
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/channel.h"
#include "core/termtext.h"
#include "launcher/cli/launcher.h"
#include "launcher/log/audit.h"
#include "launcher/log/logread.h"
#include "policy/policy.h"

#define LOG_SYNOPSIS                                                                      \
	"usage: airlock log [FILE] [--session ID] [--decision allow|deny|ask]\n"          \
	"                   [--source shim|proxy|launcher] [--json | --summary] [-f|--follow]\n"

const char cmd_log_usage[] =
	LOG_SYNOPSIS
	"\n"
	"Prints the audit log, one line per event: the local time, the session (its\n"
	"first 8 characters), the source, the pid, the decision, what was done\n"
	"(exec and the command line, shell-quoted; the file action and the path;\n"
	"connect and the destination; a session's start and end from their fields;\n"
	"another launcher event's message), then in brackets the rule (policy\n"
	"file:line), who decided when it was not the policy and how long an answer\n"
	"took; the reason; last, in parentheses, a message beside an action and a\n"
	"connection's bytes, duration and path.  Shim events are what the agent's\n"
	"processes reported from inside the sandbox; proxy and launcher events are\n"
	"the launcher's own.\n"
	"\n"
	"  FILE               the log to read, or - for standard input; default:\n"
	"                     today's, $XDG_STATE_HOME/airlock/logs/YYYY-MM-DD.jsonl\n"
	"                     ($XDG_STATE_HOME defaults to ~/.local/state)\n"
	"  --session ID       only the events of session ID (or of sessions it begins)\n"
	"  --decision D       only events decided D: allow or deny; ask: the asked ones\n"
	"                     (answered by a human, session memory, --headless or a timeout)\n"
	"  --source S         only events from S: shim, proxy or launcher\n"
	"  --json             print the matching lines as they are in the log (for jq)\n"
	"  --summary          per session (in order of first appearance): its start and\n"
	"                     end, the agent's program, workspace, policy and exit\n"
	"                     status, then grouped counts: commands run (allowed,\n"
	"                     denied), files written, files whose reading was denied,\n"
	"                     network destinations (with the proxy's bytes), denies (by\n"
	"                     rule) and asks (who answered, how); each group sorted by\n"
	"                     count, at most 20 rows; the filters choose the events;\n"
	"                     a session with a checkpoint: its files saved and created\n"
	"  -f, --follow       after the end, wait for new events and print them too,\n"
	"                     until interrupted\n"
	"\n"
	"A line that is not a JSON object is reported on stderr with its line number\n"
	"and skipped.  Decisions are coloured when standard output is a terminal and\n"
	"NO_COLOR is not set.\n"
	"\n"
	"Exit status: 0 success; 1 the log cannot be read; 2 usage error.\n";

/* How long -f sleeps between looks when inotify is not available (ms). */
#define LOG_POLL_MS 250

/* The parsed command line. */
struct log_args {
	const char *file; /* NULL: today's default log */
	struct logread_filter filter;
	bool json;
	bool summary;
	bool follow;
	bool color;
};

static const char *const sources[] = { AUDIT_SOURCE_SHIM, AUDIT_SOURCE_PROXY, AUDIT_SOURCE_LAUNCHER,
				       NULL };

/* ---- the command line ---------------------------------------------------- */

static int usage_error(const char *fmt, const char *arg)
{
	fputs("airlock: log: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n" LOG_SYNOPSIS "See 'airlock log --help'.\n", stderr);
	return -1;
}

static bool one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(s, *words) == 0)
			return true;
	return false;
}

/* Matches "--NAME VALUE" or "--NAME=VALUE" at argv[*i].  Returns 1, 0 or -1 (no value). */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	int r = airlock_option_value(argc, argv, i, name, value);
	return r < 0 ? usage_error("%s needs a value", name) : r;
}

/* One option at argv[*i]: 1 taken, 0 not an option of ours, -1 usage error. */
static int parse_option(int argc, char **argv, int *i, struct log_args *a)
{
	int r;
	if ((r = option_value(argc, argv, i, "--session", &a->filter.session)) != 0)
		return r;
	if ((r = option_value(argc, argv, i, "--decision", &a->filter.decision)) != 0)
		return r < 0 || policy_decision_parse(a->filter.decision) >= 0
			       ? r
			       : usage_error("--decision must be allow, deny or ask, not '%s'",
					     a->filter.decision);
	if ((r = option_value(argc, argv, i, "--source", &a->filter.source)) != 0)
		return r < 0 || one_of(a->filter.source, sources)
			       ? r
			       : usage_error("--source must be shim, proxy or launcher, not '%s'",
					     a->filter.source);
	if (strcmp(argv[*i], "--json") == 0)
		a->json = true;
	else if (strcmp(argv[*i], "--summary") == 0)
		a->summary = true;
	else if (strcmp(argv[*i], "-f") == 0 || strcmp(argv[*i], "--follow") == 0)
		a->follow = true;
	else
		return 0;
	return 1;
}

/* Fills a.  Returns 0, 1 when help was printed, -1 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct log_args *a)
{
	bool options = true;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (options && strcmp(arg, "--") == 0) {
			options = false;
			continue;
		}
		if (options && airlock_is_help(arg)) {
			fputs(cmd_log_usage, stdout);
			return 1;
		}
		if (options && arg[0] == '-' && arg[1] != '\0') {
			int r = parse_option(argc, argv, &i, a);
			if (r < 0)
				return -1;
			if (r == 0)
				return usage_error("unknown option: %s", arg);
			continue;
		}
		if (a->file)
			return usage_error("more than one FILE: %s", arg);
		a->file = arg;
	}
	if (a->summary && a->json)
		return usage_error("%s", "--summary and --json do not go together");
	if (a->summary && a->follow)
		return usage_error("%s", "--summary reads the log to its end: no --follow");
	return 0;
}

/* ---- one event for people ------------------------------------------------ */

static void put_decision(FILE *f, const char *d, bool color)
{
	static const char *const colors[POLICY_DECISION_MAX] = {
		[POLICY_ALLOW] = "\033[32m", [POLICY_ASK] = "\033[1;33m", [POLICY_DENY] = "\033[1;31m"
	};
	int v = policy_decision_parse(d);
	const char *c = color && v >= 0 ? colors[v] : NULL;
	if (!d)
		d = "-";
	if (c)
		fputs(c, f);
	termtext_put_text(f, d);
	if (c)
		fputs("\033[0m", f);
	/* padded after the colour codes so the columns line up */
	for (size_t n = strlen(d); n < 5; n++)
		fputc(' ', f);
}

/* "  [RULE, by WHO, N ms]": left out when there is none of them. */
static void put_why(FILE *f, json_object *ev)
{
	const char *rule = logread_str(ev, "rule"), *by = logread_str(ev, "decided_by");
	long long ms = logread_num(ev, "response_time_ms");
	const char *sep = "  [";
	if (channel_decided_by_parse(by) == CHANNEL_BY_POLICY)
		by = rule ? NULL : "the policy's default"; /* with a rule, the rule says it */
	else if (channel_decided_by_parse(by) == CHANNEL_BY_DEFAULT)
		by = "the headless answer"; /* an ask nobody could answer: not the policy's default */
	if (rule) {
		fputs(sep, f);
		termtext_put_text(f, rule);
		sep = ", ";
	}
	if (by) {
		fputs(sep, f);
		fputs("by ", f);
		termtext_put_text(f, by);
		sep = ", ";
	}
	if (ms >= 0) {
		fprintf(f, "%s%lld ms", sep, ms);
		sep = ", ";
	}
	if (strcmp(sep, "  [") != 0)
		fputc(']', f);
}

/* s (unsafe bytes escaped) in a column of width bytes, then a space. */
static void put_column(FILE *f, const char *s, size_t width)
{
	termtext_put_text(f, s);
	for (size_t n = strlen(s); n < width; n++)
		fputc(' ', f);
	fputc(' ', f);
}

/* "  (MESSAGE; TRAFFIC)", either part left out when the event has none; nothing when neither. */
static void put_aside(FILE *f, const char *message, json_object *ev)
{
	char *traffic = NULL;
	size_t len = 0;
	FILE *t = open_memstream(&traffic, &len);
	if (t) {
		logread_put_traffic(t, ev);
		if (fclose(t) != 0)
			len = 0;
	}
	if (message || len) {
		fputs("  (", f);
		if (message)
			termtext_put_text(f, message);
		fputs(message && len ? "; " : "", f);
		fwrite(traffic, 1, len, f);
		fputc(')', f);
	}
	free(traffic);
}

static void print_event(FILE *f, json_object *ev, bool color)
{
	char session[9] = "-";
	const char *sid = logread_str(ev, "session_id"), *source = logread_str(ev, "source");
	const char *reason = logread_str(ev, "reason"), *message = logread_str(ev, "message");
	long long pid = logread_num(ev, "pid");
	if (sid && *sid) {
		size_t n = strnlen(sid, 8);
		memcpy(session, sid, n);
		session[n] = '\0';
	}
	logread_put_time(f, logread_str(ev, "timestamp"), false);
	fputc(' ', f);
	put_column(f, session, 8);
	put_column(f, source ? source : "-", 8);
	if (pid > 0)
		fprintf(f, "%7lld ", pid);
	else
		fprintf(f, "%7s ", "-");
	put_decision(f, logread_str(ev, "decision"), color);
	fputc(' ', f);
	logread_put_what(f, ev);
	put_why(f, ev);
	/* the default's reason only repeats put_why()'s "by the policy's default" */
	if (reason && !logread_str(ev, "rule") && strncmp(reason, "no rule matches:", 16) == 0)
		reason = NULL;
	if (reason) {
		fputs("  ", f);
		termtext_put_text(f, reason);
	}
	/* a message and traffic beside an exec, file or network event: put_what() showed the action */
	if (logread_str(ev, "command") || logread_str(ev, "file") || logread_str(ev, "network_dst"))
		put_aside(f, message, ev);
	fputc('\n', f);
}

/*
 * Waits for the log to grow: inotify when it can watch the file, else a
 * short sleep.  The poll timeout makes up for a missed or coalesced event.
 */
static void wait_for_more(int ino)
{
	char events[4096];
	struct pollfd p = { .fd = ino, .events = POLLIN };
	if (ino < 0) {
		poll(NULL, 0, LOG_POLL_MS);
		return;
	}
	if (poll(&p, 1, 1000) > 0)
		while (read(ino, events, sizeof events) > 0)
			;
}

/* Reads to the end, then keeps reading what is appended, until killed or an error.  Exit status. */
static int follow(struct logread *r, const char *path)
{
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino >= 0 && inotify_add_watch(ino, path, IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE) < 0) {
		close(ino);
		ino = -1;
	}
	for (;;) {
		int e = logread_available(r);
		if (e < 0) {
			airlock_err("log: cannot read %s: %s", r->name, strerror(-e));
			break;
		}
		/* printed now, not when a pipe's buffer fills: someone is watching */
		if (fflush(stdout) != 0)
			break;
		logread_check_truncated(r);
		wait_for_more(ino);
	}
	if (ino >= 0)
		close(ino);
	return AIRLOCK_EXIT_FAILURE;
}

/* One matching event: its line as it is, or one line for people (a logread_event_fn). */
static void print_line(void *ctx, json_object *ev, const char *line, size_t len,
		       unsigned long lineno)
{
	const struct log_args *a = ctx;
	(void)lineno;
	if (a->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	} else
		print_event(stdout, ev, a->color);
}

static bool use_color(void)
{
	const char *no = getenv("NO_COLOR");
	return isatty(STDOUT_FILENO) && !(no && *no);
}

int cmd_log(int argc, char **argv)
{
	struct log_args a = { 0 };
	struct log_summary *sum = NULL;
	struct logread rd = { .fd = -1 };
	char path[PATH_MAX];
	int r = parse_args(argc, argv, &a), status = AIRLOCK_EXIT_OK;
	if (r != 0)
		return r > 0 ? AIRLOCK_EXIT_OK : AIRLOCK_EXIT_USAGE;
	int fd = logread_open(a.file, "log", path, sizeof path);
	if (fd < 0)
		return AIRLOCK_EXIT_FAILURE;
	a.color = !a.json && use_color();
	if (a.summary && !(sum = log_summary_new()))
		r = -1;
	if (r < 0 || (a.summary ? logread_init(&rd, fd, path, "log", &a.filter, log_summary_add, sum)
				: logread_init(&rd, fd, path, "log", &a.filter, print_line, &a)) < 0) {
		airlock_err("log: out of memory");
		status = AIRLOCK_EXIT_FAILURE;
		rd.fd = fd;
	} else if (a.follow && rd.fd != STDIN_FILENO)
		status = follow(&rd, path);
	else if ((r = logread_available(&rd)) < 0) {
		airlock_err("log: cannot read %s: %s", path, strerror(-r));
		status = AIRLOCK_EXIT_FAILURE;
	}
	if (rd.tok)
		logread_finish(&rd);
	if (sum && status == AIRLOCK_EXIT_OK)
		log_summary_print(stdout, sum, a.color);
	log_summary_free(sum);
	logread_free(&rd);
	return status;
}
