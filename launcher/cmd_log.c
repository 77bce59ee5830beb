/* cmd_log.c — `airlock log`: prints the audit log for people, filtered, or its raw lines; follows it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "launcher/launcher.h"
#include "launcher/run.h"


#define LOG_SYNOPSIS                                                                      \
	"usage: airlock log [FILE] [--session ID] [--decision allow|deny|ask]\n"          \
	"                   [--source shim|proxy|launcher] [--json] [-f|--follow]\n"

const char cmd_log_usage[] =
	LOG_SYNOPSIS
	"\n"
	"Prints the audit log, one line per event: the local time, the session (its\n"
	"first 8 characters), the source, the pid, the decision, what was done\n"
	"(exec and the command line, shell-quoted; the file action and the path;\n"
	"connect and the destination; a launcher event's message), then in brackets\n"
	"the rule (policy file:line), who decided when it was not the policy and how\n"
	"long an answer took, and last the reason.  Shim events are what the agent's\n"
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
	"  -f, --follow       after the end, wait for new events and print them too,\n"
	"                     until interrupted\n"
	"\n"
	"A line that is not a JSON object is reported on stderr with its line number\n"
	"and skipped.  Decisions are coloured when standard output is a terminal and\n"
	"NO_COLOR is not set.\n"
	"\n"
	"Exit status: 0 success; 1 the log cannot be read; 2 usage error.\n";

/* A line longer than this is reported and skipped rather than buffered without end. */
#define LOG_MAX_LINE (16u << 20)
/* How long -f sleeps between looks when inotify is not available (ms). */
#define LOG_POLL_MS 250

/* The parsed command line. */
struct log_args {
	const char *file;     /* NULL: today's default log */
	const char *session;  /* a session id or a prefix of one */
	const char *decision; /* allow / deny / ask */
	const char *source;   /* shim / proxy / launcher */
	bool json;
	bool follow;
};

/* The log being read: a byte stream cut into lines, the last one possibly partial. */
struct log_reader {
	int fd;
	const char *name;        /* for messages */
	char *buf;               /* owned; bytes read, not yet a whole line */
	size_t len, cap;
	unsigned long lineno;    /* lines handed out so far */
	bool skipping;           /* inside a line longer than LOG_MAX_LINE */
	json_tokener *tok;       /* owned */
	const struct log_args *args;
	bool color;
};

static const char *const decisions[] = { "allow", "deny", "ask", NULL };
static const char *const sources[] = { "shim", "proxy", "launcher", NULL };

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
	if ((r = option_value(argc, argv, i, "--session", &a->session)) != 0)
		return r;
	if ((r = option_value(argc, argv, i, "--decision", &a->decision)) != 0)
		return r < 0 || one_of(a->decision, decisions)
			       ? r
			       : usage_error("--decision must be allow, deny or ask, not '%s'",
					     a->decision);
	if ((r = option_value(argc, argv, i, "--source", &a->source)) != 0)
		return r < 0 || one_of(a->source, sources)
			       ? r
			       : usage_error("--source must be shim, proxy or launcher, not '%s'",
					     a->source);
	if (strcmp(argv[*i], "--json") == 0)
		a->json = true;
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
	return 0;
}

/* ---- text for a terminal ------------------------------------------------- */

/*
 * Length of a sequence at s a terminal would act on rather than show: C0
 * controls and DEL, C1 controls (U+0080-U+009F, which some terminals obey
 * as CSI and friends) and the bidi controls that reorder what is shown
 * (CVE-2021-42574).  0 when s starts none.  The log holds what an agent
 * chose to run; printing it must not let it drive the reader's terminal.
 */
static size_t unsafe_len(const unsigned char *s)
{
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 1;
	if (s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
		return 2;
	if (s[0] == 0xE2 && s[1] == 0x80 &&
	    ((s[2] >= 0xAA && s[2] <= 0xAE) || s[2] == 0x8E || s[2] == 0x8F))
		return 3; /* LRE..RLO, LRM, RLM */
	if (s[0] == 0xE2 && s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9)
		return 3; /* LRI..PDI */
	return 0;
}

/* Writes the n unsafe bytes at s as \n, \t, \r or \xNN (both shell $'...' and readable). */
static void put_escaped(FILE *f, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			fputs("\\n", f);
		else if (s[i] == '\t')
			fputs("\\t", f);
		else if (s[i] == '\r')
			fputs("\\r", f);
		else
			fprintf(f, "\\x%02x", s[i]);
	}
}

/* Free text (a reason, a message): unsafe sequences escaped, the rest as it is. */
static void put_text(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	while (*u) {
		size_t n = unsafe_len(u);
		if (n)
			put_escaped(f, u, n);
		else
			fputc(*u, f);
		u += n ? n : 1;
	}
}

static bool has_unsafe(const char *s)
{
	for (const unsigned char *u = (const unsigned char *)s; *u; u++)
		if (unsafe_len(u))
			return true;
	return false;
}

/* True when s reads the same to sh without quotes. */
static bool plain_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_@%+=:,./-", *s)))
			return false;
	return true;
}

/*
 * A word as a shell would need it to be pasted back: bare when plain,
 * '...' when it has no unsafe bytes, else bash's $'...' with escapes.
 */
static void put_word(FILE *f, const char *s)
{
	if (plain_word(s)) {
		fputs(s, f);
		return;
	}
	if (!has_unsafe(s)) {
		fputc('\'', f);
		for (; *s; s++)
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc(*s, f);
		fputc('\'', f);
		return;
	}
	fputs("$'", f);
	for (const unsigned char *u = (const unsigned char *)s; *u;) {
		size_t n = unsafe_len(u);
		if (n)
			put_escaped(f, u, n);
		else if (*u == '\'' || *u == '\\')
			fprintf(f, "\\%c", *u);
		else
			fputc(*u, f);
		u += n ? n : 1;
	}
	fputc('\'', f);
}

/* ---- one event for people ------------------------------------------------ */

/* The string member key of o, or NULL when absent or not a string. */
static const char *str(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The integer member key of o, or -1 when absent or not an integer. */
static long long num(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return (long long)json_object_get_int64(v);
}

/* The event's RFC 3339 UTC timestamp as local HH:MM:SS.mmm; "??:??:??.???" when unreadable. */
static void put_time(FILE *f, const char *ts)
{
	struct tm tm = { 0 }, local;
	unsigned ms = 0;
	const char *rest = ts ? strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (rest && rest[0] == '.' && sscanf(rest, ".%3u", &ms) != 1)
		rest = NULL;
	time_t t = rest ? timegm(&tm) : (time_t)-1;
	if (t == (time_t)-1 || !localtime_r(&t, &local)) {
		fputs("??:??:??.???", f);
		return;
	}
	fprintf(f, "%02d:%02d:%02d.%03u", local.tm_hour, local.tm_min, local.tm_sec, ms % 1000);
}

static void put_decision(FILE *f, const char *d, bool color)
{
	const char *c = NULL;
	if (!d)
		d = "-";
	if (color)
		c = strcmp(d, "deny") == 0    ? "\033[1;31m"
		    : strcmp(d, "ask") == 0   ? "\033[1;33m"
		    : strcmp(d, "allow") == 0 ? "\033[32m"
					      : NULL;
	if (c)
		fputs(c, f);
	put_text(f, d);
	if (c)
		fputs("\033[0m", f);
	/* padded after the colour codes so the columns line up */
	for (size_t n = strlen(d); n < 5; n++)
		fputc(' ', f);
}

/* What was done: the command line, the file action and path, the destination, or the message. */
static void put_what(FILE *f, json_object *ev)
{
	const char *s;
	json_object *args;
	if ((s = str(ev, "command"))) {
		fputs("exec ", f);
		put_word(f, s);
		if (json_object_object_get_ex(ev, "args", &args) &&
		    json_object_is_type(args, json_type_array))
			for (size_t i = 0; i < json_object_array_length(args); i++) {
				const char *a = json_object_get_string(json_object_array_get_idx(args, i));
				fputc(' ', f);
				put_word(f, a ? a : "");
			}
		if (json_object_object_get_ex(ev, "truncated", &args) && json_object_get_boolean(args))
			fputs(" ...(truncated)", f);
	} else if ((s = str(ev, "file"))) {
		put_text(f, str(ev, "action") ? str(ev, "action") : "open");
		fputc(' ', f);
		put_word(f, s);
	} else if ((s = str(ev, "network_dst"))) {
		fputs("connect ", f);
		put_text(f, s);
	} else if ((s = str(ev, "message")))
		put_text(f, s);
	else
		fputc('-', f);
}

/* "  [RULE, by WHO, N ms]": left out when there is none of them. */
static void put_why(FILE *f, json_object *ev)
{
	const char *rule = str(ev, "rule"), *by = str(ev, "decided_by");
	long long ms = num(ev, "response_time_ms");
	const char *sep = "  [";
	if (by && strcmp(by, "policy") == 0)
		by = rule ? NULL : "the policy's default"; /* with a rule, the rule says it */
	if (rule) {
		fputs(sep, f);
		put_text(f, rule);
		sep = ", ";
	}
	if (by) {
		fputs(sep, f);
		fputs("by ", f);
		put_text(f, by);
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
	put_text(f, s);
	for (size_t n = strlen(s); n < width; n++)
		fputc(' ', f);
	fputc(' ', f);
}

static void print_event(FILE *f, json_object *ev, bool color)
{
	char session[9] = "-";
	const char *sid = str(ev, "session_id"), *source = str(ev, "source");
	const char *reason = str(ev, "reason"), *message = str(ev, "message");
	long long pid = num(ev, "pid");
	if (sid && *sid) {
		size_t n = strnlen(sid, 8);
		memcpy(session, sid, n);
		session[n] = '\0';
	}
	put_time(f, str(ev, "timestamp"));
	fputc(' ', f);
	put_column(f, session, 8);
	put_column(f, source ? source : "-", 8);
	if (pid > 0)
		fprintf(f, "%7lld ", pid);
	else
		fprintf(f, "%7s ", "-");
	put_decision(f, str(ev, "decision"), color);
	fputc(' ', f);
	put_what(f, ev);
	put_why(f, ev);
	if (reason) {
		fputs("  ", f);
		put_text(f, reason);
	}
	/* a message beside an exec, file or network event: put_what() showed the action */
	if (message && (str(ev, "command") || str(ev, "file") || str(ev, "network_dst"))) {
		fputs("  (", f);
		put_text(f, message);
		fputc(')', f);
	}
	fputc('\n', f);
}

/* ---- reading ------------------------------------------------------------- */

static bool matches(json_object *ev, const struct log_args *a)
{
	const char *s;
	if (a->session &&
	    (!(s = str(ev, "session_id")) || strncmp(s, a->session, strlen(a->session)) != 0))
		return false;
	if (a->decision && strcmp(a->decision, "ask") == 0) {
		/* an ask is logged with its outcome; who answered says it was asked */
		if (!(s = str(ev, "decided_by")) || strcmp(s, "policy") == 0)
			return false;
	} else if (a->decision && (!(s = str(ev, "decision")) || strcmp(s, a->decision) != 0)) {
		return false;
	}
	if (a->source && (!(s = str(ev, "source")) || strcmp(s, a->source) != 0))
		return false;
	return true;
}

/* Parses one whole line as one JSON object (RFC 8259, UTF-8 checked), or NULL. */
static json_object *parse_line(json_tokener *tok, const char *line, size_t len)
{
	json_tokener_reset(tok);
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	if (!o)
		return NULL;
	size_t end = json_tokener_get_parse_end(tok);
	while (end < len && strchr(" \t\r", line[end]))
		end++;
	if (end < len || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Handles one line (without its '\n'): skips blank ones, warns about bad ones, prints the rest. */
static void handle_line(struct log_reader *r, const char *line, size_t len)
{
	r->lineno++;
	if (len == strspn(line, " \t\r"))
		return;
	if (len > INT_MAX) {
		airlock_err("log: %s:%lu: line too long, skipped", r->name, r->lineno);
		return;
	}
	json_object *ev = parse_line(r->tok, line, len);
	if (!ev) {
		airlock_err("log: %s:%lu: not a JSON object, skipped", r->name, r->lineno);
		return;
	}
	if (matches(ev, r->args)) {
		if (r->args->json) {
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
		} else
			print_event(stdout, ev, r->color);
	}
	json_object_put(ev);
}

/* Hands out each whole line in the buffer and keeps the partial last one. */
static void handle_lines(struct log_reader *r)
{
	size_t start = 0;
	char *nl;
	while ((nl = memchr(r->buf + start, '\n', r->len - start)) != NULL) {
		size_t end = (size_t)(nl - r->buf);
		if (r->skipping)
			r->skipping = false, r->lineno++;
		else
			handle_line(r, r->buf + start, end - start);
		start = end + 1;
	}
	memmove(r->buf, r->buf + start, r->len - start);
	r->len -= start;
	if (r->len > LOG_MAX_LINE) {
		/* never a line the launcher wrote: drop it up to its end */
		if (!r->skipping)
			airlock_err("log: %s:%lu: line longer than %u bytes, skipped", r->name,
				    r->lineno + 1, LOG_MAX_LINE);
		r->skipping = true;
		r->len = 0;
	}
}

/* Reads what is there now, up to end of file.  0, or -errno. */
static int read_available(struct log_reader *r)
{
	for (;;) {
		if (r->cap - r->len < 65536) {
			char *p = realloc(r->buf, r->cap + 65536);
			if (!p)
				return -ENOMEM;
			r->buf = p;
			r->cap += 65536;
		}
		ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		r->len += (size_t)n;
		handle_lines(r);
	}
}

/* The end of the log: a last line without '\n' is still a line (cut short by a crash, perhaps). */
static void finish_lines(struct log_reader *r)
{
	if (r->len > 0 && !r->skipping)
		handle_line(r, r->buf, r->len);
	r->len = 0;
}

/* A log truncated under us (by hand: the launcher only appends) is read again from its start. */
static void check_truncated(struct log_reader *r)
{
	struct stat st;
	off_t pos = lseek(r->fd, 0, SEEK_CUR);
	if (pos < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size >= pos)
		return;
	airlock_err("log: %s was truncated; reading it from the start", r->name);
	lseek(r->fd, 0, SEEK_SET);
	r->len = 0;
	r->lineno = 0;
	r->skipping = false;
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
static int follow(struct log_reader *r, const char *path)
{
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino >= 0 && inotify_add_watch(ino, path, IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE) < 0) {
		close(ino);
		ino = -1;
	}
	for (;;) {
		int e = read_available(r);
		if (e < 0) {
			airlock_err("log: cannot read %s: %s", r->name, strerror(-e));
			break;
		}
		/* printed now, not when a pipe's buffer fills: someone is watching */
		if (fflush(stdout) != 0)
			break;
		check_truncated(r);
		wait_for_more(ino);
	}
	if (ino >= 0)
		close(ino);
	return AIRLOCK_EXIT_FAILURE;
}

/* Opens the log; fills name.  The fd, or -1 with the error reported. */
static int open_log(const struct log_args *a, char *path, size_t cap)
{
	int r;
	if (a->file && strcmp(a->file, "-") == 0) {
		snprintf(path, cap, "<stdin>");
		return STDIN_FILENO;
	}
	if (a->file)
		snprintf(path, cap, "%s", a->file);
	else if ((r = audit_default_path(path, cap, time(NULL))) < 0) {
		airlock_err("log: cannot find today's log: %s (set HOME or XDG_STATE_HOME)",
			    strerror(-r));
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		airlock_err("log: cannot open %s: %s", path, strerror(errno));
	return fd;
}

static bool use_color(void)
{
	const char *no = getenv("NO_COLOR");
	return isatty(STDOUT_FILENO) && !(no && *no);
}

int cmd_log(int argc, char **argv)
{
	struct log_args a = { 0 };
	char path[PATH_MAX];
	int r = parse_args(argc, argv, &a), status = AIRLOCK_EXIT_OK;
	if (r != 0)
		return r > 0 ? AIRLOCK_EXIT_OK : AIRLOCK_EXIT_USAGE;
	struct log_reader rd = { .fd = open_log(&a, path, sizeof path), .name = path, .args = &a };
	if (rd.fd < 0)
		return AIRLOCK_EXIT_FAILURE;
	rd.color = !a.json && use_color();
	rd.tok = json_tokener_new();
	if (rd.tok) /* RFC 8259 JSON only, as jq reads it: no comments, no invalid UTF-8 */
		json_tokener_set_flags(rd.tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	if (!rd.tok) {
		airlock_err("log: out of memory");
		status = AIRLOCK_EXIT_FAILURE;
	} else if (a.follow && rd.fd != STDIN_FILENO)
		status = follow(&rd, path);
	else if ((r = read_available(&rd)) < 0) {
		airlock_err("log: cannot read %s: %s", path, strerror(-r));
		status = AIRLOCK_EXIT_FAILURE;
	}
	finish_lines(&rd);
	if (rd.tok)
		json_tokener_free(rd.tok);
	free(rd.buf);
	if (rd.fd != STDIN_FILENO)
		close(rd.fd);
	return status;
}
