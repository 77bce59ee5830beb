/* logread.c — reading the audit log for `airlock log` and `airlock suggest`: lines, filters, terminal-safe text. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/termtext.h"
#include "launcher/cli/launcher.h"
#include "launcher/log/logread.h"
#include "launcher/log/audit.h"
#include "core/channel.h"
#include "policy/policy.h"

/* A line longer than this is reported and skipped rather than buffered without end. */
#define LOG_MAX_LINE (16u << 20)

/* ---- fields ---------------------------------------------------------------------- */

const char *logread_str(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

long long logread_num(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return (long long)json_object_get_int64(v);
}

int logread_time(const char *ts, long long *t, unsigned *ms)
{
	struct tm tm = { 0 };
	unsigned m = 0;
	const char *rest = ts ? strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (rest && rest[0] == '.' && sscanf(rest, ".%3u", &m) != 1)
		rest = NULL;
	time_t v = rest ? timegm(&tm) : (time_t)-1;
	if (v == (time_t)-1)
		return -1;
	*t = (long long)v;
	*ms = m % 1000;
	return 0;
}

bool logread_is_event(json_object *ev, const char *kind)
{
	const char *e = logread_str(ev, "event");
	return e && strcmp(e, kind) == 0;
}

bool logread_asked(json_object *ev)
{
	const char *by = logread_str(ev, "decided_by");
	return by && channel_decided_by_parse(by) != CHANNEL_BY_POLICY;
}

/* ---- sessions -------------------------------------------------------------------- */

/* Replaces *slot with a copy of v; false when out of memory (*slot kept). */
static bool replace(char **slot, const char *v)
{
	char *c = strdup(v);
	if (!c)
		return false;
	free(*slot);
	*slot = c;
	return true;
}

/* Copies ev's string field key into *slot when it has one (and it is absolute, when absolute). */
static bool take(char **slot, json_object *ev, const char *key, bool absolute)
{
	const char *v = logread_str(ev, key);
	return !v || (absolute && v[0] != '/') || replace(slot, v);
}

/* What a launcher event without an action says: the start's program, workspace, policy; the end's time, exit status. */
static bool note_launcher(struct log_session *x, json_object *ev, const char *ts)
{
	char exit[32];
	long long status = logread_num(ev, "exit_status");
	if (logread_is_event(ev, AUDIT_SESSION_START))
		return take(&x->agent, ev, "program", false) && take(&x->workspace, ev, "workspace", true) &&
		       take(&x->policy, ev, "policy", false);
	if (!logread_is_event(ev, AUDIT_SESSION_END))
		return true;
	if (ts && !replace(&x->end_ts, ts))
		return false;
	snprintf(exit, sizeof exit, "%lld", status);
	return status < 0 || replace(&x->exit, exit);
}

bool log_session_note(struct log_session *x, json_object *ev)
{
	const char *ts = logread_str(ev, "timestamp"), *source = logread_str(ev, "source");
	bool action = logread_str(ev, "command") || logread_str(ev, "file") ||
		      logread_str(ev, "network_dst");
	if (ts && (!x->first_ts || strcmp(ts, x->first_ts) < 0) && !replace(&x->first_ts, ts))
		return false;
	if (ts && (!x->last_ts || strcmp(ts, x->last_ts) > 0) && !replace(&x->last_ts, ts))
		return false;
	if (action || !source || strcmp(source, AUDIT_SOURCE_LAUNCHER) != 0)
		return true;
	return note_launcher(x, ev, ts);
}

void log_session_free(struct log_session *x)
{
	free(x->id);
	free(x->first_ts);
	free(x->last_ts);
	free(x->end_ts);
	free(x->agent);
	free(x->workspace);
	free(x->policy);
	free(x->exit);
}

/* ---- filters --------------------------------------------------------------------- */

bool logread_matches(json_object *ev, const struct logread_filter *a)
{
	const char *s;
	if (!a)
		return true;
	if (a->session &&
	    (!(s = logread_str(ev, "session_id")) || strncmp(s, a->session, strlen(a->session)) != 0))
		return false;
	if (a->decision && policy_decision_parse(a->decision) == POLICY_ASK) {
		/* an ask is logged with its outcome; who answered says it was asked */
		if (!logread_asked(ev))
			return false;
	} else if (a->decision &&
		   (!(s = logread_str(ev, "decision")) || strcmp(s, a->decision) != 0)) {
		return false;
	}
	if (a->source && (!(s = logread_str(ev, "source")) || strcmp(s, a->source) != 0))
		return false;
	return true;
}

/* ---- reading --------------------------------------------------------------------- */

int logread_open(const char *file, const char *cmd, char *path, size_t cap)
{
	int r;
	if (file && strcmp(file, "-") == 0) {
		snprintf(path, cap, "<stdin>");
		return STDIN_FILENO;
	}
	if (file)
		snprintf(path, cap, "%s", file);
	else if ((r = audit_default_path(path, cap, time(NULL))) < 0) {
		airlock_err("%s: cannot find today's log: %s (set HOME or XDG_STATE_HOME)", cmd,
			    strerror(-r));
		return -1;
	}
	/*
	 * A log is a regular file or a pipe.  `airlock log <(zcat old.jsonl.gz)`
	 * names /dev/fd/N, a pipe, and a FIFO is read as cat(1) reads one: to
	 * its writer's end, waiting for a writer as open(2) does (fifo(7)); the
	 * reader named it, and an interrupt ends the wait.  A directory or a
	 * device is refused unread: /dev/zero would never end, /dev/tty would
	 * wait for typing (`-` reads standard input).  The open does not block
	 * (O_NONBLOCK: a FIFO's or a device's open may), and the opened file is
	 * what is checked (fstat(2)), not the name.
	 */
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), fl;
	if (fd < 0 || fstat(fd, &st) != 0) {
		airlock_err("%s: cannot open %s: %s", cmd, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		airlock_err("%s: %s: not a regular file (%s): a log must be a regular file or a pipe",
			    cmd, path,
			    S_ISDIR(st.st_mode)    ? "a directory"
			    : S_ISSOCK(st.st_mode) ? "a socket"
						   : "a device");
		close(fd);
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		airlock_err("%s: cannot read %s: %s", cmd, path, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISFIFO(st.st_mode)) {
		/*
		 * Opened before any writer, a FIFO reads as empty at once.  Wait
		 * for one instead, as a blocking open would: on Linux poll(2)
		 * gives POLLIN once data is there and POLLHUP once a writer came
		 * and went (none since the open: not yet), whichever is first.
		 * A pipe whose writer is gone gives POLLHUP at once.
		 */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
	}
	return fd;
}

int logread_init(struct logread *r, int fd, const char *name, const char *cmd,
		 const struct logread_filter *filter, logread_event_fn fn, void *ctx)
{
	*r = (struct logread){ .fd = fd, .name = name, .cmd = cmd, .filter = filter, .fn = fn,
			       .ctx = ctx };
	r->tok = json_tokener_new();
	if (!r->tok)
		return -ENOMEM;
	/* RFC 8259 JSON only, as jq reads it: no comments, no invalid UTF-8 */
	json_tokener_set_flags(r->tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	return 0;
}

void logread_free(struct logread *r)
{
	if (r->tok)
		json_tokener_free(r->tok);
	free(r->buf);
	if (r->fd >= 0 && r->fd != STDIN_FILENO)
		close(r->fd);
	r->tok = NULL;
	r->buf = NULL;
	r->fd = -1;
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

/*
 * What makes an object no event: every event the launcher writes has a
 * session_id and an RFC 3339 timestamp, both strings.  NULL when it has them;
 * else a phrase for "NAME:LINE: PHRASE, skipped".  Such a line would print
 * with placeholders ("??:??:??", "session -") rather than what happened.
 */
static const char *event_flaw(json_object *ev)
{
	json_object *v;
	long long t;
	unsigned ms;
	if (!json_object_object_get_ex(ev, "timestamp", &v))
		return "no 'timestamp'";
	if (!json_object_is_type(v, json_type_string))
		return "'timestamp' is not a string";
	if (logread_time(json_object_get_string(v), &t, &ms) < 0)
		return "'timestamp' is not an RFC 3339 time";
	if (!json_object_object_get_ex(ev, "session_id", &v))
		return "no 'session_id'";
	if (!json_object_is_type(v, json_type_string))
		return "'session_id' is not a string";
	return NULL;
}

/* Handles one line (without its '\n'): skips blank ones, warns about bad ones, hands out the rest. */
static void handle_line(struct logread *r, const char *line, size_t len)
{
	r->lineno++;
	if (len == strspn(line, " \t\r"))
		return;
	if (len > INT_MAX) {
		r->malformed++;
		airlock_err("%s: %s:%lu: line too long, skipped", r->cmd, r->name, r->lineno);
		return;
	}
	json_object *ev = parse_line(r->tok, line, len);
	if (!ev) {
		r->malformed++;
		airlock_err("%s: %s:%lu: not a JSON object, skipped", r->cmd, r->name, r->lineno);
		return;
	}
	const char *wrong = event_flaw(ev);
	if (wrong) {
		r->malformed++;
		airlock_err("%s: %s:%lu: %s, skipped", r->cmd, r->name, r->lineno, wrong);
	} else if (logread_matches(ev, r->filter))
		r->fn(r->ctx, ev, line, len, r->lineno);
	json_object_put(ev);
}

/* Hands out each whole line in the buffer and keeps the partial last one. */
static void handle_lines(struct logread *r)
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
		if (!r->skipping) {
			r->malformed++;
			airlock_err("%s: %s:%lu: line longer than %u bytes, skipped", r->cmd, r->name,
				    r->lineno + 1, LOG_MAX_LINE);
		}
		r->skipping = true;
		r->len = 0;
	}
}

int logread_available(struct logread *r)
{
	for (;;) {
		if (r->cap - r->len < 65536) { /* room for a read of 64 KiB at least */
			char *p = grow_array(r->buf, &r->cap, r->len + 65536, 1, 65536);
			if (!p)
				return -ENOMEM;
			r->buf = p;
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

void logread_finish(struct logread *r)
{
	if (r->len > 0 && !r->skipping)
		handle_line(r, r->buf, r->len);
	r->len = 0;
}

void logread_check_truncated(struct logread *r)
{
	struct stat st;
	off_t pos = lseek(r->fd, 0, SEEK_CUR);
	if (pos < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size >= pos)
		return;
	airlock_err("%s: %s was truncated; reading it from the start", r->cmd, r->name);
	lseek(r->fd, 0, SEEK_SET);
	r->len = 0;
	r->lineno = 0;
	r->skipping = false;
}

int logread_file(const char *file, const char *cmd, const struct logread_filter *filter,
		 logread_event_fn fn, void *ctx, char *path, size_t cap)
{
	struct logread rd;
	int fd = logread_open(file, cmd, path, cap), r;
	if (fd < 0)
		return -1;
	if (logread_init(&rd, fd, path, cmd, filter, fn, ctx) < 0) {
		airlock_err("%s: out of memory", cmd);
		logread_free(&rd);
		return -1;
	}
	if ((r = logread_available(&rd)) < 0)
		airlock_err("%s: cannot read %s: %s", cmd, path, strerror(-r));
	else
		logread_finish(&rd);
	logread_free(&rd);
	return r < 0 ? -1 : 0;
}

/* ---- text for a terminal (escaped by core/termtext.h) ------------------------------ */

void logread_put_time(FILE *f, const char *ts, bool with_date)
{
	struct tm local;
	long long t;
	unsigned ms;
	time_t tt;
	if (logread_time(ts, &t, &ms) < 0 || (tt = (time_t)t, !localtime_r(&tt, &local))) {
		fputs(with_date ? "\?\?\?\?-\?\?-\?\? \?\?:\?\?:\?\?.\?\?\?" : "\?\?:\?\?:\?\?.\?\?\?", f);
		return;
	}
	if (with_date)
		fprintf(f, "%04d-%02d-%02d ", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday);
	fprintf(f, "%02d:%02d:%02d.%03u", local.tm_hour, local.tm_min, local.tm_sec, ms);
}

/* A string field for "LABEL VALUE" text: the value made safe, or "?" when absent. */
static void put_field(FILE *f, json_object *ev, const char *key)
{
	const char *s = logread_str(ev, key);
	termtext_put_text(f, s ? s : "?");
}

/* A number field: its value, or "?" when absent. */
static void put_num(FILE *f, json_object *ev, const char *key)
{
	long long n = logread_num(ev, key);
	if (n >= 0)
		fprintf(f, "%lld", n);
	else
		fputc('?', f);
}

/* A session_start event, as the launcher once wrote it in its message. */
static void put_start(FILE *f, json_object *ev)
{
	static const char *const networks[POLICY_NETWORK_MODE_MAX] = {
		[POLICY_NETWORK_PROXY] = "network through the egress proxy",
		[POLICY_NETWORK_NONE] = "no network",
		[POLICY_NETWORK_HOST] = "the host's network",
	};
	const char *sandbox = logread_str(ev, "sandbox"), *net = logread_str(ev, "network");
	int mode = policy_network_mode_parse(net);
	json_object *v;
	/* airlock serve: no program of its own, process trees join it */
	bool serve = !logread_str(ev, "program");
	fputs("session started: ", f);
	if (serve)
		fputs("airlock serve (no program of its own: process trees join it)", f);
	else
		put_field(f, ev, "program");
	fputs("; policy ", f);
	put_field(f, ev, "policy");
	fputs("; workspace ", f);
	put_field(f, ev, "workspace");
	if (sandbox && strcmp(sandbox, AUDIT_SANDBOX_NONE) == 0) {
		fputs(serve ? "; NO kernel sandbox: the shim and this log only"
			    : "; NO kernel sandbox (--no-sandbox): the shim and this log only",
		      f);
		return;
	}
	fputs("; ", f);
	termtext_put_text(f, sandbox ? sandbox : "?");
	fputs(" sandbox, ", f);
	termtext_put_text(f, mode >= 0 ? networks[mode] : net ? net : "network ?");
	fputs(", ", f);
	put_num(f, ev, "masked");
	fputs(" path(s) masked", f);
	if (logread_num(ev, "sockets_masked") > 0) {
		fputs(" (", f);
		put_num(f, ev, "sockets_masked");
		fputs(" unix socket(s))", f);
	}
	if (json_object_object_get_ex(ev, "sockets_capped", &v) && json_object_get_boolean(v))
		fputs(" (socket walk capped)", f);
	fprintf(f, "%s; seccomp refuses",
		json_object_object_get_ex(ev, "masks_capped", &v) && json_object_get_boolean(v)
			? " (walk capped)"
			: "");
	if (json_object_object_get_ex(ev, "seccomp", &v) && json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			const char *g = json_object_get_string(json_object_array_get_idx(v, i));
			fputc(' ', f);
			termtext_put_text(f, g ? g : "?");
		}
	/* the Landlock ruleset's ABI, or why there was none (left out by launchers before it) */
	if (json_object_object_get_ex(ev, "landlock", &v)) {
		const char *why = json_object_get_string(v);
		if (json_object_is_type(v, json_type_int))
			fprintf(f, "; Landlock ruleset (ABI %d)", json_object_get_int(v));
		else {
			fputs("; Landlock ", f);
			termtext_put_text(f, why ? why : "?");
		}
	}
}

/* A session_end event, as the launcher once wrote it in its message. */
static void put_end(FILE *f, json_object *ev)
{
	static const char *const counts[][3] = {
		{ "; ", "allowed", " allowed" },	 { ", ", "denied", " denied" },
		{ ", ", "asked", " asked" },		 { "; ", "connections", " connection(s)" },
		{ ", ", "refused", " refused" },	 { ", ", "bytes_up", " bytes out" },
		{ ", ", "bytes_down", " in" },
	};
	fputs("session ended: exit status ", f);
	put_num(f, ev, "exit_status");
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		fputs(counts[i][0], f);
		put_num(f, ev, counts[i][1]);
		fputs(counts[i][2], f);
	}
}

void logread_put_what(FILE *f, json_object *ev)
{
	const char *s;
	json_object *args;
	if ((s = logread_str(ev, "command"))) {
		fputs("exec ", f);
		termtext_put_word(f, s);
		if (json_object_object_get_ex(ev, "args", &args) &&
		    json_object_is_type(args, json_type_array))
			for (size_t i = 0; i < json_object_array_length(args); i++) {
				const char *a = json_object_get_string(json_object_array_get_idx(args, i));
				fputc(' ', f);
				termtext_put_word(f, a ? a : "");
			}
		if (json_object_object_get_ex(ev, "truncated", &args) && json_object_get_boolean(args))
			fputs(" ...(truncated)", f);
	} else if ((s = logread_str(ev, "file"))) {
		/* a launcher event on a file (copy_applied, kept_aside) says its kind */
		const char *what = logread_str(ev, "action")  ? logread_str(ev, "action")
				   : logread_str(ev, "event") ? logread_str(ev, "event")
							      : "open";
		termtext_put_text(f, what);
		fputc(' ', f);
		termtext_put_word(f, s);
		if ((s = logread_str(ev, "kept"))) {
			fputs(" -> ", f);
			termtext_put_word(f, s);
		}
	} else if ((s = logread_str(ev, "network_dst"))) {
		fputs("connect ", f);
		termtext_put_text(f, s);
		if ((s = logread_str(ev, "network_addr"))) {
			fputs(" at ", f);
			termtext_put_text(f, s);
		}
	} else if (logread_is_event(ev, AUDIT_SESSION_START))
		put_start(f, ev);
	else if (logread_is_event(ev, AUDIT_SESSION_END))
		put_end(f, ev);
	else if ((s = logread_str(ev, "message")))
		termtext_put_text(f, s);
	else
		fputc('-', f);
}

void logread_put_traffic(FILE *f, json_object *ev)
{
	long long up = logread_num(ev, "bytes_up"), down = logread_num(ev, "bytes_down");
	long long ms = logread_num(ev, "duration_ms");
	const char *via = logread_str(ev, "via");
	if (up < 0 && down < 0 && ms < 0 && !via)
		return;
	fprintf(f, "%lld bytes up, %lld down", up < 0 ? 0 : up, down < 0 ? 0 : down);
	if (ms >= 0)
		fprintf(f, ", %lld ms", ms);
	if (via) {
		fputs(", via ", f);
		termtext_put_text(f, via);
	}
}
