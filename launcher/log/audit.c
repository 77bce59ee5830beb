/* audit.c — the audit log (DESIGN.md step 9): one JSON object per line, appended with one write(2) each. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/grow.h"
#include "core/utf8.h"
#include "launcher/log/audit.h"


struct audit_log {
	int fd;
	char *path;       /* owned */
	char *session_id; /* owned */
	uint64_t id_seed; /* random per open: ids differ between sessions */
	uint64_t count;   /* events written: ids are unique within the session */
	char *line;       /* owned; reused for each line so a write needs no allocation */
	size_t line_cap;
	audit_tap_fn tap; /* the live view's copy of each line, or NULL */
	void *tap_arg;
	int error;        /* the first failure (-errno), then sticky: nothing more is written */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- the path ------------------------------------------------------------ */

/* $XDG_STATE_HOME if absolute (the XDG spec ignores a relative one), else HOME/.local/state. */
static int state_home(char *buf, size_t cap)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, cap, "%s", xdg);
	else {
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());
			home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
		}
		if (!home)
			return -ENOENT;
		n = snprintf(buf, cap, "%s/.local/state", home);
	}
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int audit_default_path(char *buf, size_t cap, time_t when)
{
	char dir[PATH_MAX];
	struct tm tm;
	int r = state_home(dir, sizeof dir);
	if (r < 0)
		return r;
	/* the local day, not UTC: "today's log" is the user's today */
	if (!localtime_r(&when, &tm))
		return -EOVERFLOW;
	int n = snprintf(buf, cap, "%s/airlock/logs/%04d-%02d-%02d.jsonl", dir, tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* mkdir -p of path's parent directories, each new one 0700; existing ones are left as they are. */
static int make_parents(const char *path)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof buf)
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* ---- ids and timestamps -------------------------------------------------- */

/* splitmix64's finaliser: a bijection on 64 bits, so distinct counters give distinct ids. */
static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t random_seed(void)
{
	uint64_t s;
	if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s)
		return s;
	/* no entropy yet (early boot): time and pid still separate concurrent sessions */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return mix64((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ (uint64_t)getpid();
}

/* RFC 3339 UTC with milliseconds: 2026-11-30T01:02:03.456Z (out: 64 bytes). */
static void format_timestamp(char *out)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!gmtime_r(&ts.tv_sec, &tm))
		memset(&tm, 0, sizeof tm);
	size_t n = strftime(out, 48, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 16, ".%03uZ", (unsigned)(ts.tv_nsec / 1000000) % 1000u);
}

/* ---- strings: JSON needs UTF-8 ------------------------------------------- */

/*
 * A JSON string for s.  json-c copies bytes >= 0x80 through unchecked, and a
 * line holding invalid UTF-8 is not JSON (RFC 8259 section 8.1): jq and
 * Python refuse it.  So each maximal invalid subpart becomes one U+FFFD and
 * the rest is copied; json-c escapes quotes, backslashes and controls.
 * A path with invalid bytes is thus logged lossily but still recognisably.
 */
static json_object *json_string(const char *s)
{
	static const char replacement[] = UTF8_REPLACEMENT;
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, bad = 0;
	long l;
	if (n > INT_MAX / 3) /* json-c lengths are ints; the channel bounds strings far below */
		return NULL;
	for (; i < n; i += l > 0 ? (size_t)l : (size_t)-l)
		if ((l = utf8_seq(u + i, n - i)) < 0)
			bad++;
	if (bad == 0)
		return json_object_new_string_len(s, (int)n);
	/* a replacement is 3 bytes and replaces at least 1 */
	char *buf = malloc(n + 2 * bad + 1);
	if (!buf)
		return NULL;
	size_t o = 0;
	for (i = 0; i < n; i += l > 0 ? (size_t)l : (size_t)-l) {
		l = utf8_seq(u + i, n - i);
		if (l < 0) {
			memcpy(buf + o, replacement, 3);
			o += 3;
		} else {
			memcpy(buf + o, s + i, (size_t)l);
			o += (size_t)l;
		}
	}
	json_object *j = json_object_new_string_len(buf, (int)o);
	free(buf);
	return j;
}

/* ---- the line ------------------------------------------------------------ */

enum field_kind {
	FIELD_STRING, /* const char *: left out when NULL */
	FIELD_PID,    /* pid_t: left out when 0 */
	FIELD_ARGS,   /* const char *const * with the event's nargs: written whenever command is */
	FIELD_LIST,   /* const char *const *, NULL-terminated: left out when NULL */
	FIELD_MS,     /* long: left out when negative */
	FIELD_INT,    /* int */
	FIELD_COUNT,  /* unsigned long */
	FIELD_BYTES,  /* uint64_t */
	FIELD_FLAG,   /* bool: left out when false */
	FIELD_ABI,    /* int, a number when > 0; else the const char * that follows it, when not NULL */
	FIELD_KIND_MAX
};

/* Where a field lives: in the event, or in a group it points to (all left out when that is NULL). */
enum field_group { GROUP_EVENT, GROUP_START, GROUP_END, GROUP_TRAFFIC, GROUP_MAX };

/* A field whose JSON name is its member's name, in the event or in a group. */
#define EVENT_FIELD(m, kind) { #m, kind, GROUP_EVENT, offsetof(struct audit_event, m) }
#define START_FIELD(m, kind) { #m, kind, GROUP_START, offsetof(struct audit_session_start, m) }
#define END_FIELD(m, kind) { #m, kind, GROUP_END, offsetof(struct audit_session_end, m) }
#define TRAFFIC_FIELD(m, kind) { #m, kind, GROUP_TRAFFIC, offsetof(struct audit_traffic, m) }

/*
 * Every field an event can carry, in the order they appear in a line after
 * id, timestamp and session_id: the one table of them (README "The audit
 * log" describes each).
 */
static const struct event_field {
	const char *name;
	enum field_kind kind;
	enum field_group group;
	size_t offset; /* in the group's struct */
} event_fields[] = {
	EVENT_FIELD(source, FIELD_STRING),
	EVENT_FIELD(pid, FIELD_PID),
	EVENT_FIELD(ns_pid, FIELD_PID),
	EVENT_FIELD(event, FIELD_STRING),
	START_FIELD(program, FIELD_STRING),
	START_FIELD(profile, FIELD_STRING),
	START_FIELD(policy, FIELD_STRING),
	START_FIELD(workspace, FIELD_STRING),
	START_FIELD(sandbox, FIELD_STRING),
	START_FIELD(network, FIELD_STRING),
	START_FIELD(masked, FIELD_COUNT),
	START_FIELD(sockets_masked, FIELD_COUNT),
	START_FIELD(masks_capped, FIELD_FLAG),
	START_FIELD(sockets_capped, FIELD_FLAG),
	START_FIELD(seccomp, FIELD_LIST),
	START_FIELD(landlock, FIELD_ABI),
	START_FIELD(open_gate, FIELD_STRING),
	START_FIELD(checkpoint, FIELD_STRING),
	EVENT_FIELD(command, FIELD_STRING),
	EVENT_FIELD(args, FIELD_ARGS),
	EVENT_FIELD(file, FIELD_STRING),
	EVENT_FIELD(kept, FIELD_STRING),
	EVENT_FIELD(action, FIELD_STRING),
	EVENT_FIELD(network_dst, FIELD_STRING),
	EVENT_FIELD(network_addr, FIELD_STRING),
	EVENT_FIELD(decision, FIELD_STRING),
	EVENT_FIELD(decided_by, FIELD_STRING),
	EVENT_FIELD(rule, FIELD_STRING),
	EVENT_FIELD(reason, FIELD_STRING),
	EVENT_FIELD(layer, FIELD_STRING),
	EVENT_FIELD(response_time_ms, FIELD_MS),
	END_FIELD(exit_status, FIELD_INT),
	END_FIELD(allowed, FIELD_COUNT),
	END_FIELD(denied, FIELD_COUNT),
	END_FIELD(asked, FIELD_COUNT),
	END_FIELD(connections, FIELD_COUNT),
	END_FIELD(refused, FIELD_COUNT),
	TRAFFIC_FIELD(bytes_up, FIELD_BYTES),
	TRAFFIC_FIELD(bytes_down, FIELD_BYTES),
	TRAFFIC_FIELD(duration_ms, FIELD_MS),
	TRAFFIC_FIELD(via, FIELD_STRING),
	EVENT_FIELD(message, FIELD_STRING),
	EVENT_FIELD(truncated, FIELD_FLAG),
};

#define NFIELDS (sizeof(event_fields) / sizeof(event_fields[0]))

/* The struct a group's fields are in, or NULL when the event has none of them. */
static const void *group_of(const struct audit_event *ev, enum field_group g)
{
	switch (g) {
	case GROUP_EVENT: return ev;
	case GROUP_START: return ev->start;
	case GROUP_END: return ev->end;
	case GROUP_TRAFFIC: return ev->traffic;
	case GROUP_MAX: break;
	}
	return NULL;
}

/* A JSON array of n strings (n SIZE_MAX: up to the NULL that ends s); NULL when out of memory. */
static json_object *json_strings(const char *const *s, size_t n)
{
	if (n == SIZE_MAX)
		for (n = 0; s[n]; n++)
			;
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; a && i < n; i++) {
		json_object *v = json_string(s && s[i] ? s[i] : "");
		if (!v || json_object_array_add(a, v) != 0) {
			json_object_put(v);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

/* A count as a JSON integer (json-c's are int64: a larger one is written as the largest). */
static json_object *json_count(uint64_t n)
{
	return json_object_new_int64(n > INT64_MAX ? INT64_MAX : (int64_t)n);
}

/* The JSON value of one field, NULL with *absent set when the event leaves it out. */
static json_object *field_value(const struct event_field *f, const struct audit_event *ev,
				int *absent)
{
	const char *base = group_of(ev, f->group), *p;
	*absent = 1;
	if (!base)
		return NULL; /* the event has none of this group's fields (NULL + offset is undefined) */
	p = base + f->offset;
	*absent = 0;
	switch (f->kind) {
	case FIELD_STRING: {
		const char *s = *(const char *const *)(const void *)p;
		if (s)
			return json_string(s);
		break;
	}
	case FIELD_PID:
		if (*(const pid_t *)(const void *)p != 0)
			return json_object_new_int64(*(const pid_t *)(const void *)p);
		break;
	case FIELD_ARGS:
		if (ev->command)
			return json_strings(ev->args, ev->nargs);
		break;
	case FIELD_LIST:
		if (*(const char *const *const *)(const void *)p)
			return json_strings(*(const char *const *const *)(const void *)p, SIZE_MAX);
		break;
	case FIELD_MS:
		if (*(const long *)(const void *)p >= 0)
			return json_object_new_int64(*(const long *)(const void *)p);
		break;
	case FIELD_INT:
		return json_object_new_int64(*(const int *)(const void *)p);
	case FIELD_COUNT:
		return json_count(*(const unsigned long *)(const void *)p);
	case FIELD_BYTES:
		return json_count(*(const uint64_t *)(const void *)p);
	case FIELD_FLAG:
		if (*(const bool *)(const void *)p)
			return json_object_new_boolean(1);
		break;
	case FIELD_ABI: {
		int n = *(const int *)(const void *)p;
		if (n > 0)
			return json_object_new_int64(n);
		const char *why = ((const struct audit_session_start *)(const void *)base)
					  ->landlock_unavailable;
		if (f->group == GROUP_START && why)
			return json_string(why);
		break;
	}
	case FIELD_KIND_MAX:
		break;
	}
	*absent = 1;
	return NULL;
}

/* Adds key = v to o, taking v; -ENOMEM when v is NULL (its allocation failed) or adding fails. */
static int add(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	/* keys are constants: json-c need not copy them; insertion order is line order */
	unsigned opts = JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY;
	if (json_object_object_add_ex(o, key, v, opts) != 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static json_object *event_object(struct audit_log *log, const struct audit_event *ev)
{
	char id[17], ts[64];
	json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM, absent;
	snprintf(id, sizeof id, "%016" PRIx64, mix64(log->id_seed + log->count));
	format_timestamp(ts);
	if (r == 0)
		r = add(o, "id", json_object_new_string(id));
	if (r == 0)
		r = add(o, "timestamp", json_object_new_string(ts));
	if (r == 0)
		r = add(o, "session_id", json_string(log->session_id));
	for (size_t i = 0; r == 0 && i < NFIELDS; i++) {
		json_object *v = field_value(&event_fields[i], ev, &absent);
		if (!absent)
			r = add(o, event_fields[i].name, v);
	}
	if (r != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Copies text + '\n' into log->line, growing it.  0 or -ENOMEM. */
static int stage_line(struct audit_log *log, const char *text, size_t len)
{
	if (len + 1 > log->line_cap) {
		char *p = grow_array(log->line, &log->line_cap, len + 1, 1, 4096);
		if (!p)
			return -ENOMEM;
		log->line = p;
	}
	memcpy(log->line, text, len);
	log->line[len] = '\n';
	return 0;
}

/*
 * Takes back the first `done` bytes of a line whose write failed part way:
 * with O_APPEND every write(2) lands at the end of the file, so the file
 * offset after our last piece is the end of our bytes (end).  The line is
 * cut off only if it is still the file's tail (fstat(2) size == end) and
 * its pieces were contiguous: otherwise another session sharing the day's
 * file appended after us, and cutting would take its line too.  Then (and
 * in the window between fstat and ftruncate(2), which no lock closes: other
 * sessions do not lock) the half line stays, glued to the next session's
 * line; launcher/log/logread.c reports that line as "not a JSON object" and
 * skips it.  A reader following the file (airlock log -f) that already
 * read the half line sees the file shrink and reads it again from the
 * start (logread_check_truncated()).
 */
static void take_back(int fd, off_t end, size_t done, bool contiguous)
{
	struct stat st;
	if (contiguous && end >= (off_t)done && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size == end)
		(void)ftruncate(fd, end - (off_t)done);
}

/*
 * One write(2) for the whole line: with O_APPEND each write lands at the
 * end as a unit, so sessions sharing the day's file never split a line.
 * A short write is finished (on a full disk the next write says ENOSPC, on
 * a file size limit EFBIG); when finishing it fails, what was written of
 * the line is taken back (take_back()), so no half line is left.
 */
static int write_line(int fd, const char *p, size_t n)
{
	size_t done = 0;
	off_t end = -1;         /* the file offset after our last piece, once a write was short */
	bool contiguous = true; /* every piece began where the one before ended */
	int r = 0;
	while (done < n) {
		ssize_t w = write(fd, p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = w < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)w;
		if (done == n && end < 0)
			return 0; /* whole in one write: the usual case */
		off_t pos = lseek(fd, 0, SEEK_CUR);
		if (pos < 0) {
			contiguous = false;
		} else {
			if (end >= 0 && pos - (off_t)w != end)
				contiguous = false;
			end = pos;
		}
	}
	if (r < 0 && done > 0)
		take_back(fd, end, done, contiguous);
	return r;
}

int audit_write(struct audit_log *log, const struct audit_event *ev)
{
	size_t len;
	json_object *o = event_object(log, ev);
	if (!o) {
		if (log->error == 0)
			log->error = -ENOMEM; /* an event not recorded, as much as a full disk */
		return log->error;
	}
	log->count++;
	/* NOSLASHESCAPE: paths stay readable ("/etc/passwd", not "\/etc\/passwd") */
	const char *text = json_object_to_json_string_length(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	int r = text ? stage_line(log, text, len) : -ENOMEM;
	json_object_put(o);
	if (r != 0) {
		if (log->error == 0)
			log->error = r;
		return log->error;
	}
	/* once a write failed, none is tried: the log ends with the last whole line */
	if (log->error == 0)
		log->error = write_line(log->fd, log->line, len + 1);
	if (log->tap)
		log->tap(log->tap_arg, log->line, len);
	return log->error;
}

int audit_launcher_note(struct audit_log *log, pid_t pid, const char *decision, const char *message)
{
	struct audit_event ev = { .source = AUDIT_SOURCE_LAUNCHER, .pid = pid, .decision = decision,
				  .response_time_ms = -1, .message = message };
	return log ? audit_write(log, &ev) : 0;
}

int audit_error(const struct audit_log *log)
{
	return log->error;
}

void audit_set_tap(struct audit_log *log, audit_tap_fn fn, void *arg)
{
	log->tap = fn;
	log->tap_arg = arg;
}

/* ---- open and close ------------------------------------------------------ */

struct audit_log *audit_open(const char *path, const char *session_id, char *err, size_t errlen)
{
	char def[PATH_MAX];
	int r;
	if (!path) {
		if ((r = audit_default_path(def, sizeof def, time(NULL))) < 0) {
			set_err(err, errlen, "cannot find the audit log directory: %s%s", strerror(-r),
				r == -ENOENT ? " (set HOME or XDG_STATE_HOME to an absolute path)" : "");
			return NULL;
		}
		if ((r = make_parents(def)) < 0) {
			set_err(err, errlen, "cannot create the directories of %s: %s", def, strerror(-r));
			return NULL;
		}
		path = def;
	}
	struct audit_log *log = calloc(1, sizeof *log);
	if (log)
		log->fd = -1;
	if (!log || !(log->path = strdup(path)) ||
	    !(log->session_id = strdup(session_id ? session_id : ""))) {
		audit_close(log);
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	log->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (log->fd < 0) {
		set_err(err, errlen, "cannot open the audit log %s: %s", path, strerror(errno));
		audit_close(log);
		return NULL;
	}
	log->id_seed = random_seed();
	return log;
}

const char *audit_path(const struct audit_log *log)
{
	return log->path;
}

void audit_close(struct audit_log *log)
{
	if (!log)
		return;
	if (log->fd >= 0)
		close(log->fd);
	free(log->line);
	free(log->session_id);
	free(log->path);
	free(log);
}
