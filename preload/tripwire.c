/* tripwire.c — the shim without a launcher: decisions from a compiled image, asks given the headless answer, events appended to a JSON Lines log. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/channel.h"
#include "core/utf8.h"
#include "preload/shim.h"

#define FD_FLOOR 900 /* the log fd is moved up here, out of the way of the program's fds */

/* Bounds of the parts of a line (bytes of JSON text); the whole line is at most PIPE_BUF. */
#define LINE_CAP PIPE_BUF
#define SESSION_ID_MAX 128 /* AIRLOCK_SESSION longer than this is cut */
#define RULE_TEXT_MAX 512  /* the rule's "file:line" */
#define REASON_MAX 768     /* the rule's reason */
#define TRUNCATED_TAIL ",\"truncated\":true}\n"

static char log_path[4096];    /* $AIRLOCK_LOG, absolute; "" when unset or unusable */
static const char *log_problem; /* why log_path is "" (static text), or NULL */
static char session_id[SESSION_ID_MAX + 1];
static atomic_int log_fd = -1;
static dev_t log_dev;
static ino_t log_ino;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool said_log;   /* the log failure was said on stderr */
static atomic_uint line_count; /* lines this process (and its vfork children) wrote */
static uint64_t id_seed;       /* random, from the process that started the shim */

/* splitmix64's finaliser: a bijection on 64 bits. */
static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Writes v as 2*digits lowercase hex digits at out. */
static void put_hex(char *out, uint64_t v, int digits)
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 2 * digits - 1; i >= 0; i--, v >>= 4)
		out[i] = hex[v & 15];
}

void shim_tripwire_init(const char *log, const char *session, const char *image)
{
	log_path[0] = '\0';
	log_problem = NULL;
	if (!log || !*log)
		log_problem = "AIRLOCK_LOG is not set";
	else if (log[0] != '/')
		log_problem = "AIRLOCK_LOG is not an absolute path";
	else if (!shim_join(log_path, sizeof log_path, log, (char *)NULL))
		log_problem = "AIRLOCK_LOG is too long";
	if (getrandom(&id_seed, sizeof id_seed, GRND_NONBLOCK) != (ssize_t)sizeof id_seed)
		id_seed = mix64(realtime_ns() ^ ((uint64_t)getpid() << 32));
	if (session && *session) {
		size_t n = strlen(session);
		n = n > SESSION_ID_MAX ? SESSION_ID_MAX : n;
		memcpy(session_id, session, n);
		session_id[n] = '\0';
		return;
	}
	/* the first process of the tree names the session: its image, its pid, the time */
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (const unsigned char *p = (const unsigned char *)(image ? image : ""); *p; p++)
		h = (h ^ *p) * UINT64_C(0x100000001b3);
	put_hex(session_id, mix64(h ^ mix64(((uint64_t)getpid() << 32) ^ realtime_ns())), 8);
	session_id[16] = '\0';
}

const char *shim_tripwire_session(void)
{
	return session_id;
}

/* ---- the log's fd ------------------------------------------------------------------------ */

/* Opens the log for appending and lifts the fd to FD_FLOOR or above; -errno on failure. */
static int open_log(struct stat *st)
{
	if (!log_path[0])
		return -EINVAL;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, log_path,
			      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return -errno;
	int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, FD_FLOOR);
	if (high >= 0) {
		syscall(SYS_close, fd);
		fd = high;
	}
	if (fstat(fd, st) != 0) {
		int e = errno;
		syscall(SYS_close, fd);
		return -e;
	}
	return fd;
}

/*
 * The log's fd, opened on first use and shared by threads and fork
 * children; used only while its inode is still the log's (a program may
 * close every fd it does not know and reuse the number), else opened again.
 * -errno when the log cannot be opened.
 */
static int log_fd_get(void)
{
	struct stat st;
	int fd = atomic_load_explicit(&log_fd, memory_order_acquire);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == log_dev && st.st_ino == log_ino)
		return fd;
	pthread_mutex_lock(&open_lock);
	if (atomic_load(&log_fd) == fd) {
		fd = open_log(&st);
		if (fd >= 0) {
			log_dev = st.st_dev;
			log_ino = st.st_ino;
			atomic_store_explicit(&log_fd, fd, memory_order_release);
		}
	} else {
		fd = atomic_load(&log_fd);
	}
	pthread_mutex_unlock(&open_lock);
	return fd;
}

void shim_tripwire_warm(void)
{
	if (log_path[0])
		(void)log_fd_get();
}

/* Says once on stderr that the log cannot be written, and why. */
static void say_log_failure(int err)
{
	char msg[4400];
	if (atomic_exchange(&said_log, true))
		return;
	const char *why = log_problem ? log_problem : strerror(err);
	if (shim_join(msg, sizeof msg, "airlock: cannot write the audit log ",
		      log_path[0] ? log_path : "", log_path[0] ? ": " : "", why,
		      ": every action it would record is refused\n", (char *)NULL))
		(void)syscall(SYS_write, 2, msg, strlen(msg));
}

/* ---- the line ---------------------------------------------------------------------------- */

/* A line being built in a caller's buffer: nothing is written past cap. */
struct line {
	char *p;
	size_t len, cap;
	bool truncated; /* a string was cut to fit */
};

/* Appends n bytes when they fit below limit; false (nothing appended) when not. */
static bool put_n(struct line *l, const char *s, size_t n, size_t limit)
{
	if (limit > l->cap)
		limit = l->cap;
	if (l->len + n > limit)
		return false;
	memcpy(l->p + l->len, s, n);
	l->len += n;
	return true;
}

static bool put(struct line *l, const char *s, size_t limit)
{
	return put_n(l, s, strlen(s), limit);
}

static bool put_uint(struct line *l, unsigned long long v, size_t limit)
{
	char buf[24];
	size_t i = sizeof buf;
	do
		buf[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	return put_n(l, buf + i, sizeof buf - i, limit);
}

/*
 * Appends the contents of a JSON string for s (RFC 8259 section 7, no
 * quotes): '"' and '\' escaped, control characters and DEL as \u00XX,
 * valid UTF-8 copied, each maximal invalid subpart as U+FFFD (as the
 * audit log writes it: launcher/log/audit.c).  Stops before the first
 * character that would end past limit, sets l->truncated and returns false;
 * true when all of s fit.  The result is always valid JSON text.
 */
static bool put_escaped(struct line *l, const char *s, size_t limit)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		char esc[8];
		const char *piece = esc;
		size_t plen, adv = 1;
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			plen = 2;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(esc, "\\u00", 4);
			put_hex(esc + 4, c, 1);
			plen = 6;
		} else if (c < 0x80) {
			piece = s + i;
			plen = 1;
		} else {
			long q = utf8_seq(u + i, n - i);
			if (q > 0) {
				piece = s + i;
				plen = adv = (size_t)q;
			} else {
				piece = UTF8_REPLACEMENT;
				plen = 3;
				adv = (size_t)-q;
			}
		}
		if (!put_n(l, piece, plen, limit)) {
			l->truncated = true;
			return false;
		}
		i += adv;
	}
	return true;
}

/* Appends ,"key":"value" (value escaped and cut to fit below limit); false when cut or absent. */
static bool put_field(struct line *l, const char *key, const char *value, size_t limit)
{
	/* ,"key":" and the closing quote */
	size_t need = strlen(key) + 6;
	if (l->len + need > limit) {
		l->truncated = true;
		return false;
	}
	put(l, ",\"", limit);
	put(l, key, limit);
	put(l, "\":\"", limit);
	bool whole = put_escaped(l, value, limit - 1);
	put(l, "\"", limit);
	return whole;
}

/* RFC 3339 UTC with milliseconds, 24 bytes: 2026-12-02T11:23:06.123Z (days to civil date, proleptic Gregorian). */
static void put_timestamp(struct line *l, size_t limit)
{
	struct timespec ts;
	char out[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t secs = ts.tv_sec, days = secs / 86400, rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	/* civil from days: eras of 400 years (146097 days) starting on 0000-03-01 */
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
	int64_t y = yoe + era * 400 + (m <= 2);
	unsigned v[] = { (unsigned)y, (unsigned)m, (unsigned)d, (unsigned)(rem / 3600),
			 (unsigned)(rem / 60 % 60), (unsigned)(rem % 60),
			 (unsigned)(ts.tv_nsec / 1000000) };
	static const char seps[] = "--T::.Z";
	static const int widths[] = { 4, 2, 2, 2, 2, 2, 3 };
	size_t o = 0;
	for (int i = 0; i < 7; i++) {
		for (int k = widths[i] - 1; k >= 0; k--, v[i] /= 10)
			out[o + (size_t)k] = (char)('0' + v[i] % 10);
		o += (size_t)widths[i];
		out[o++] = seps[i];
	}
	put_n(l, out, o, limit);
}

/* The reason logged for a decision no rule made, as the launcher writes it (events_default_reason). */
static const char *default_reason(const struct shim_action *a)
{
	static const char *const why[POLICY_ACTION_MAX] = {
		[POLICY_ACTION_EXEC] = "no rule matches: the policy's default for exec decided",
		[POLICY_ACTION_READ] = "no rule matches: the policy's default for read decided",
		[POLICY_ACTION_WRITE] = "no rule matches: the policy's default for write decided",
		[POLICY_ACTION_CONNECT] = "no rule matches: the policy's default for connect decided",
	};
	enum policy_action kind = a->source == SHIM_EXEC	 ? POLICY_ACTION_EXEC
				  : a->source == SHIM_CONNECT ? POLICY_ACTION_CONNECT
							      : policy_file_action_kind(a->action);
	return (unsigned)kind < POLICY_ACTION_MAX ? why[kind] : NULL;
}

/*
 * The tail of a line: decision, decided_by, rule, reason, response time,
 * message (each bounded), into l.
 */
static void put_tail(struct line *l, const struct shim_action *a, enum policy_decision d,
		     bool asked)
{
	const struct policy_image *img = shim_image();
	struct policy_rule_info info;
	const char *reason = NULL;
	put_field(l, "decision", policy_decision_name(d), l->cap);
	put_field(l, "decided_by", channel_decided_by_name(asked ? CHANNEL_BY_DEFAULT
								 : CHANNEL_BY_POLICY),
		  l->cap);
	if (img && policy_rule_describe(img, a->v.rule, &info) == 0) {
		char rule[RULE_TEXT_MAX + 16];
		struct line r = { rule, 0, sizeof rule - 1, false };
		put_escaped(&r, info.file, RULE_TEXT_MAX);
		put(&r, ":", r.cap);
		put_uint(&r, info.line, r.cap);
		rule[r.len] = '\0';
		/* already escaped: copied as it is */
		put(l, ",\"rule\":\"", l->cap);
		put(l, rule, l->cap - 1);
		put(l, "\"", l->cap);
		l->truncated |= r.truncated;
		reason = info.reason;
	} else if (img && a->v.rule < 0) {
		reason = default_reason(a);
	}
	if (reason)
		put_field(l, "reason", reason, l->len + REASON_MAX);
	if (asked) {
		put(l, ",\"response_time_ms\":0", l->cap);
	}
	if (!img)
		put_field(l, "message", "the policy image could not be used: every action is refused",
			  l->cap);
}

/* Builds the line for a (decided d; asked: an ask given the headless answer) in buf (LINE_CAP bytes); its length. */
static size_t build_line(char *buf, const struct shim_action *a, enum policy_decision d, bool asked)
{
	char tailbuf[RULE_TEXT_MAX + REASON_MAX + 256];
	struct line tail = { tailbuf, 0, sizeof tailbuf, false };
	struct line l = { buf, 0, LINE_CAP, false };
	char id[16];

	put_tail(&tail, a, d, asked);
	put_hex(id, mix64(id_seed ^ mix64(((uint64_t)getpid() << 32) ^
					  atomic_fetch_add(&line_count, 1)) ^
			      realtime_ns()),
		8);
	put(&l, "{\"id\":\"", LINE_CAP);
	put_n(&l, id, sizeof id, LINE_CAP);
	put(&l, "\",\"timestamp\":\"", LINE_CAP);
	put_timestamp(&l, LINE_CAP);
	put(&l, "\"", LINE_CAP);
	put_field(&l, "session_id", session_id, LINE_CAP);
	put(&l, ",\"source\":\"shim\",\"pid\":", LINE_CAP);
	put_uint(&l, (unsigned long long)getpid(), LINE_CAP);

	/* what the action is about: what is left after the tail and the closing */
	size_t limit = LINE_CAP - tail.len - (sizeof TRUNCATED_TAIL - 1);
	switch (a->source) {
	case SHIM_EXEC:
		/* the program, then argv[1..]: room for ,"args":[] stays */
		put_field(&l, "command", a->path ? a->path : "", limit - 10);
		put(&l, ",\"args\":[", limit);
		for (size_t i = 1; a->argv && a->argv[0] && a->argv[i]; i++) {
			if (l.len + (i > 1) + 3 > limit) {
				l.truncated = true;
				break;
			}
			put(&l, i > 1 ? ",\"" : "\"", limit);
			bool whole = put_escaped(&l, a->argv[i], limit - 2);
			put(&l, "\"", limit);
			if (!whole)
				break;
		}
		put(&l, "]", limit);
		break;
	case SHIM_OPEN:
		put_field(&l, "file", a->path ? a->path : "", limit - 32);
		put_field(&l, "action", channel_action_name(a->action), limit);
		break;
	default: {
		char dst[300], port[8];
		struct line p = { port, 0, sizeof port - 1, false };
		put_uint(&p, a->port, sizeof port - 1);
		port[p.len] = '\0';
		const char *host = a->host ? a->host : "";
		bool v6 = strchr(host, ':') != NULL;
		if (!shim_join(dst, sizeof dst, v6 ? "[" : "", host, v6 ? "]:" : ":", port,
			       (char *)NULL)) {
			shim_join(dst, sizeof dst, "?:", port, (char *)NULL);
			l.truncated = true;
		}
		put_field(&l, "network_dst", dst, limit);
	}
	}
	put_n(&l, tail.p, tail.len, LINE_CAP);
	l.truncated |= tail.truncated;
	put(&l, l.truncated ? TRUNCATED_TAIL : "}\n", LINE_CAP);
	return l.len;
}

/* Appends one line with one write(2); 0, or -errno (the line was not written whole). */
static int append_line(const char *buf, size_t len)
{
	int fd = log_fd_get();
	if (fd < 0)
		return fd;
	long n;
	do
		n = syscall(SYS_write, fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

enum policy_decision shim_tripwire_resolve(struct shim_action *a, bool trace)
{
	char buf[LINE_CAP];
	enum policy_decision d = a->v.decision;
	bool asked = d == POLICY_ASK;
	enum policy_decision final = d == POLICY_ALLOW ? POLICY_ALLOW : POLICY_DENY;
	/* what the launcher would log: denies, asks, execs and connects; allowed file calls when tracing */
	if (d == POLICY_ALLOW && a->source == SHIM_OPEN && !trace)
		return POLICY_ALLOW;
	int saved = errno;
	int r = append_line(buf, build_line(buf, a, final, asked));
	if (r < 0) {
		/* when the log cannot be written, the agent cannot act */
		say_log_failure(-r);
		final = POLICY_DENY;
	}
	errno = saved;
	return final;
}
