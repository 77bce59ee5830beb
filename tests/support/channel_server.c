/* channel_server.c — a stand-in launcher for tests: serves the channel, logs each message as JSON, answers asks. */
/*
 * Usage: channel_server SOCKET_PATH LOGFILE [--answer allow|deny] [--delay-ms N] [--rules FILE]
 *
 * Listens on SOCKET_PATH (a stale socket there is replaced), accepts any
 * number of clients, and appends one JSON object per line to LOGFILE, written
 * with one write(2) per line (O_APPEND), so every line is complete on disk as
 * soon as it is logged:
 *
 *   {"type":"ask","pid":12,"uid":1000,"id":7,"source":"exec","action":"exec",
 *    "decision":"ask","decided_by":"policy","rule":-1,"result":0,
 *    "program":"/bin/ls","argv":["ls","-l"],"argc_total":2,"truncated":false}
 *
 * An exec decided as a copy of another program (CHANNEL_F_COPY) has
 * "copy_of":"/usr/bin/git" after "program".
 * "path" replaces program/argv for open, "host" and "port" for connect.  pid
 * and uid are the datagram's SCM_CREDENTIALS (one socket may carry a process
 * and the children it forked), else SO_PEERCRED's.  Each ASK is answered
 * after --delay-ms (default 0) with the first matching rule, else --answer
 * (default deny, as headless airlock does); an "answer_sent" line records
 * what was sent.  A
 * malformed datagram is logged ("malformed message from pid N: why" on
 * stderr, a "malformed" line in LOGFILE) and dropped; the client stays
 * connected.  SIGTERM or SIGINT: exit 0, removing the socket.
 *
 * --rules FILE: lines "allow GLOB" or "deny GLOB" ('#' starts a comment).
 * GLOB is fnmatch(3) (no flags) against the ask's subject: for exec the
 * program then each argument after argv[0], joined by single spaces; for
 * open the path; for connect "host:port".  The answer says decided_by
 * "policy" with rule = the rule's 0-based index; otherwise "default", -1.
 *
 * JSON strings: '"', '\\' and control characters are escaped (\n, \t, ...,
 * else \u00XX, DEL too); valid UTF-8 passes through; each byte of an invalid
 * UTF-8 sequence is written as \u00XX with the byte's value, so the line is
 * always valid JSON and the raw byte recoverable (a reader cannot tell it from
 * a real U+0080..U+00FF, which is the price of staying valid JSON).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/channel.h"

/* ---- Small helpers ---------------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	fputs("channel_server: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- JSON line builder ------------------------------------------------------- */

struct jbuf {
	char *p; /* owned */
	size_t len, cap;
};

static void jb_putn(struct jbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void jb_puts(struct jbuf *b, const char *s)
{
	jb_putn(b, s, strlen(s));
}

static void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_printf(struct jbuf *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	jb_putn(b, tmp, n < (int)sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, surrogates, > U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t need;
	unsigned lo = 0x80, hi = 0xBF;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		need = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		need = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
	else if (c >= 0xF0 && c <= 0xF4)
		need = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
	else
		return 0;
	if (n < need || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < need; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return need;
}

/* Appends s (n bytes) as a JSON string literal; see the file comment for the rules. */
static void jb_str(struct jbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	char esc[8];
	jb_putn(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(u + i, n - i);
		unsigned char c = u[i];
		if (k > 1 || (k == 1 && c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)) {
			jb_putn(b, s + i, k);
			i += k;
			continue;
		}
		const char *named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n"
				  : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b"
				  : c == '\f' ? "\\f" : NULL;
		if (!named) {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			named = esc;
		}
		jb_puts(b, named);
		i++;
	}
	jb_putn(b, "\"", 1);
}

static void jb_key_str(struct jbuf *b, const char *key, const char *val)
{
	jb_printf(b, ",\"%s\":", key);
	jb_str(b, val, strlen(val));
}

/* ---- The log ------------------------------------------------------------------- */

static int log_fd = -1;

/* Writes b's line plus '\n' with one write(2): O_APPEND keeps lines whole. */
static void log_line(struct jbuf *b)
{
	jb_putn(b, "}\n", 2);
	const char *p = b->p;
	size_t n = b->len;
	while (n > 0) {
		ssize_t w = write(log_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			die("writing the log: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	b->len = 0;
}

static void log_exec_body(struct jbuf *b, const struct channel_msg *m)
{
	struct channel_args it;
	const char *s;
	size_t n;
	bool first = true;
	jb_key_str(b, "program", m->program);
	if (m->flags & CHANNEL_F_COPY)
		jb_key_str(b, "copy_of", m->copy_of);
	jb_puts(b, ",\"argv\":[");
	channel_args_begin(m, &it);
	while ((s = channel_args_next(&it, &n)) != NULL) {
		if (!first)
			jb_putn(b, ",", 1);
		jb_str(b, s, n);
		first = false;
	}
	jb_printf(b, "],\"argc_total\":%" PRIu32, m->argc_total);
}

static void log_message(struct jbuf *b, const struct ucred *who, const struct channel_msg *m)
{
	jb_printf(b, "{\"type\":\"%s\"", channel_type_name(m->type));
	jb_printf(b, ",\"pid\":%d,\"uid\":%u,\"id\":%" PRIu32, (int)who->pid, (unsigned)who->uid, m->id);
	jb_key_str(b, "source", channel_source_name(m->source));
	jb_key_str(b, "action", channel_action_name(m->action));
	jb_key_str(b, "decision", policy_decision_name(m->decision));
	jb_key_str(b, "decided_by", channel_decided_by_name(m->decided_by));
	jb_printf(b, ",\"rule\":%" PRId32 ",\"result\":%" PRId32, m->rule, m->result);
	if (m->source == CHANNEL_SOURCE_EXEC)
		log_exec_body(b, m);
	else if (m->source == CHANNEL_SOURCE_OPEN)
		jb_key_str(b, "path", m->path);
	else if (m->source == CHANNEL_SOURCE_CONNECT) {
		jb_key_str(b, "host", m->host);
		jb_printf(b, ",\"port\":%u", (unsigned)m->port);
	}
	jb_printf(b, ",\"truncated\":%s", (m->flags & CHANNEL_F_TRUNCATED) ? "true" : "false");
	log_line(b);
}

static void log_malformed(struct jbuf *b, const struct ucred *who, const char *why)
{
	fprintf(stderr, "channel_server: malformed message from pid %d: %s\n", (int)who->pid, why);
	jb_printf(b, "{\"type\":\"malformed\",\"pid\":%d", (int)who->pid);
	jb_key_str(b, "reason", why);
	log_line(b);
}

/* ---- Rules ------------------------------------------------------------------------ */

struct rule {
	enum policy_decision decision;
	char *glob; /* owned */
};

static struct rule *rules; /* owned */
static size_t nrules;

static void load_rules(const char *file)
{
	FILE *f = fopen(file, "re");
	char line[4096];
	if (!f)
		die("%s: %s", file, strerror(errno));
	while (fgets(line, sizeof line, f)) {
		char *s = line + strspn(line, " \t"), *arg;
		s[strcspn(s, "#\r\n")] = '\0';
		if (!*s)
			continue;
		arg = s + strcspn(s, " \t");
		if (*arg)
			*arg++ = '\0';
		arg += strspn(arg, " \t");
		if ((strcmp(s, "allow") && strcmp(s, "deny")) || !*arg)
			die("%s: expected \"allow GLOB\" or \"deny GLOB\", got \"%s\"", file, s);
		rules = xrealloc(rules, (nrules + 1) * sizeof *rules);
		rules[nrules].decision = strcmp(s, "allow") ? POLICY_DENY : POLICY_ALLOW;
		rules[nrules++].glob = strdup(arg);
	}
	fclose(f);
}

/* The string rules match against (see the file comment).  Appended to b. */
static void subject(struct jbuf *b, const struct channel_msg *m)
{
	struct channel_args it;
	const char *s;
	b->len = 0;
	jb_puts(b, "");
	if (m->source == CHANNEL_SOURCE_OPEN) {
		jb_puts(b, m->path);
	} else if (m->source == CHANNEL_SOURCE_CONNECT) {
		jb_puts(b, m->host);
		jb_printf(b, ":%u", (unsigned)m->port);
	} else if (m->source == CHANNEL_SOURCE_EXEC) {
		jb_puts(b, m->program);
		channel_args_begin(m, &it);
		channel_args_next(&it, NULL); /* argv[0] */
		while ((s = channel_args_next(&it, NULL)) != NULL) {
			jb_puts(b, " ");
			jb_puts(b, s);
		}
	}
}

/* ---- Connections and pending answers ------------------------------------------------ */

struct conn {
	int fd;
	struct ucred who;
};

struct pending {
	int fd;
	struct ucred who;
	uint32_t id;
	int64_t due_ms;
	enum policy_decision decision;
	enum channel_decided_by by;
	int32_t rule;
};

struct server {
	int lfd;
	struct conn *conns; /* owned */
	size_t nconns;
	struct pending *pend; /* owned; in due order (all share one delay) */
	size_t npend;
	enum policy_decision answer;
	int delay_ms;
	struct jbuf line, subj;
	uint8_t buf[CHANNEL_MAX_MSG];
};

static void queue_answer(struct server *s, const struct conn *c, const struct channel_msg *m)
{
	struct pending p = { c->fd, c->who, m->id, now_ms() + s->delay_ms, s->answer,
			     CHANNEL_BY_DEFAULT, -1 };
	subject(&s->subj, m);
	for (size_t i = 0; i < nrules; i++) {
		if (fnmatch(rules[i].glob, s->subj.p, 0) == 0) {
			p.decision = rules[i].decision;
			p.by = CHANNEL_BY_POLICY;
			p.rule = (int32_t)i;
			break;
		}
	}
	s->pend = xrealloc(s->pend, (s->npend + 1) * sizeof *s->pend);
	s->pend[s->npend++] = p;
}

static void send_answer(struct server *s, const struct pending *p)
{
	uint8_t out[CHANNEL_HEADER_SIZE];
	int n = channel_encode_answer(out, sizeof out, p->id, p->decision, p->by, p->rule);
	int r = n < 0 ? n : channel_send_buf(p->fd, out, (size_t)n);
	if (r < 0) {
		fprintf(stderr, "channel_server: answer to pid %d: %s\n", (int)p->who.pid, strerror(-r));
		return;
	}
	jb_printf(&s->line, "{\"type\":\"answer_sent\",\"pid\":%d,\"id\":%" PRIu32, (int)p->who.pid, p->id);
	jb_key_str(&s->line, "decision", policy_decision_name(p->decision));
	jb_key_str(&s->line, "decided_by", channel_decided_by_name(p->by));
	jb_printf(&s->line, ",\"rule\":%" PRId32, p->rule);
	log_line(&s->line);
}

/* Sends every answer that is due; returns ms until the next one, or -1. */
static int flush_due(struct server *s)
{
	int64_t now = now_ms();
	size_t i = 0;
	while (i < s->npend && s->pend[i].due_ms <= now)
		send_answer(s, &s->pend[i++]);
	if (i > 0) {
		memmove(s->pend, s->pend + i, (s->npend - i) * sizeof *s->pend);
		s->npend -= i;
	}
	return s->npend ? (int)(s->pend[0].due_ms - now) : -1;
}

static void drop_conn(struct server *s, size_t idx)
{
	int fd = s->conns[idx].fd;
	size_t j = 0;
	/* Its pending answers go too: the fd number may be reused by the next client. */
	for (size_t i = 0; i < s->npend; i++)
		if (s->pend[i].fd != fd)
			s->pend[j++] = s->pend[i];
	s->npend = j;
	close(fd);
	s->conns[idx] = s->conns[--s->nconns];
}

/* Reads every queued datagram of conn idx; returns false when it closed. */
static bool serve_conn(struct server *s, size_t idx)
{
	struct conn *c = &s->conns[idx];
	struct channel_msg m;
	for (;;) {
		struct ucred sender;
		int r = channel_recv_from(c->fd, s->buf, sizeof s->buf, &m, &sender);
		/* per message: one shared socket carries a process and its children */
		struct ucred who = sender.pid > 0 ? sender : c->who;
		if (r == -EAGAIN || r == -EWOULDBLOCK)
			return true;
		if (r == -EBADMSG || r == -EPROTO || r == -EMSGSIZE) {
			log_malformed(&s->line, &who, m.why ? m.why : strerror(-r));
			continue;
		}
		if (r < 0) {
			if (r != -ECONNRESET)
				fprintf(stderr, "channel_server: recv from pid %d: %s\n",
					(int)c->who.pid, strerror(-r));
			return false;
		}
		log_message(&s->line, &who, &m);
		if (m.type == CHANNEL_ASK)
			queue_answer(s, c, &m);
	}
}

static void accept_all(struct server *s)
{
	for (;;) {
		int fd = channel_accept(s->lfd);
		struct conn c = { fd, { 0, 0, 0 } };
		if (fd < 0) {
			if (fd != -EAGAIN && fd != -EWOULDBLOCK)
				fprintf(stderr, "channel_server: accept: %s\n", strerror(-fd));
			return;
		}
		if (channel_peer(fd, &c.who) < 0)
			c.who.pid = -1;
		s->conns = xrealloc(s->conns, (s->nconns + 1) * sizeof *s->conns);
		s->conns[s->nconns++] = c;
	}
}

/* ---- Main loop ------------------------------------------------------------------------ */

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* SIGTERM/SIGINT stay blocked except inside ppoll(), so none is lost between checks. */
static void setup_signals(sigset_t *during_poll)
{
	struct sigaction sa = { .sa_handler = on_stop };
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, during_poll);
	sigdelset(during_poll, SIGTERM);
	sigdelset(during_poll, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void poll_once(struct server *s, const sigset_t *mask)
{
	static struct pollfd *pfd; /* owned; grows with the clients */
	int wait = flush_due(s);
	struct timespec ts = { wait / 1000, (long)(wait % 1000) * 1000000 };
	size_t n = s->nconns;
	pfd = xrealloc(pfd, (n + 1) * sizeof *pfd);
	pfd[0] = (struct pollfd){ s->lfd, POLLIN, 0 };
	for (size_t i = 0; i < n; i++)
		pfd[i + 1] = (struct pollfd){ s->conns[i].fd, POLLIN, 0 };
	if (ppoll(pfd, n + 1, wait < 0 ? NULL : &ts, mask) < 0) {
		if (errno != EINTR)
			die("poll: %s", strerror(errno));
		return;
	}
	/* Backwards, so drop_conn()'s swap-with-last never skips a client. */
	for (size_t i = n; i-- > 0;)
		if (pfd[i + 1].revents && !serve_conn(s, i))
			drop_conn(s, i);
	if (pfd[0].revents & POLLIN)
		accept_all(s);
}

static void usage(void)
{
	fprintf(stderr, "usage: channel_server SOCKET_PATH LOGFILE [--answer allow|deny] "
			"[--delay-ms N] [--rules FILE]\n");
	exit(2);
}

static void parse_args(struct server *s, int argc, char **argv)
{
	for (int i = 3; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--answer") && !strcmp(argv[i + 1], "allow"))
			s->answer = POLICY_ALLOW;
		else if (!strcmp(argv[i], "--answer") && !strcmp(argv[i + 1], "deny"))
			s->answer = POLICY_DENY;
		else if (!strcmp(argv[i], "--delay-ms"))
			s->delay_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rules"))
			load_rules(argv[i + 1]);
		else
			usage();
	}
	if (s->delay_ms < 0)
		usage();
}

static void open_socket(struct server *s, const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path); /* a previous run's socket */
	s->lfd = channel_listen(path);
	if (s->lfd < 0)
		die("listen on %s: %s", path, strerror(-s->lfd));
}

int main(int argc, char **argv)
{
	static struct server s = { .answer = POLICY_DENY };
	sigset_t mask;
	if (argc < 3)
		usage();
	parse_args(&s, argc, argv);
	log_fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log_fd < 0)
		die("%s: %s", argv[2], strerror(errno));
	setup_signals(&mask);
	open_socket(&s, argv[1]);
	while (!stop)
		poll_once(&s, &mask);
	for (size_t i = s.nconns; i-- > 0;)
		drop_conn(&s, i);
	close(s.lfd);
	unlink(argv[1]);
	close(log_fd);
	return 0;
}
