/*
 * tui_model.c — the approval TUI's model of the session, and its side of the
 * control protocol (control.h): the lines the launcher sends become the
 * activity ring, the approval queue and the status counts; answers, "attach"
 * and "quit" go back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "core/channel.h"
#include "core/termtext.h"
#include "core/utf8.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/tui_state.h"

/* ---- small helpers -------------------------------------------------------------------- */

int64_t tui_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Cuts s in place to at most max bytes, "..." included, between units: an escape
 * (termtext_escape_len()) or a UTF-8 sequence is kept whole or dropped whole.
 */
static void cut_units(char *s, size_t max)
{
	size_t n = strlen(s), i = 0, k;
	if (n <= max || max < 3)
		return;
	for (; i < n; i += k) {
		long seq = utf8_seq((const unsigned char *)s + i, n - i);
		k = termtext_escape_len(s + i, n - i);
		if (k == 0)
			k = seq > 0 ? (size_t)seq : 1;
		if (i + k > max - 3)
			break;
	}
	memcpy(s + i, "...", 4);
}

/*
 * Text from the session as the screen shows it: escaped (core/termtext.h, as `airlock
 * log` shows it), cut to max bytes.  malloc'ed; NULL when s is NULL or out of memory.
 */
static char *shown_text(const char *s, size_t max)
{
	char *t = termtext_text(s);
	if (t)
		cut_units(t, max);
	return t;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool jint(json_object *o, const char *key, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

/* ---- the control stream: sending ------------------------------------------------------ */

void tui_flush_out(struct tui *t)
{
	while (t->outlen > 0) {
		ssize_t w = send(t->o->control_fd, t->outq, t->outlen, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(t->o->control_fd, t->outq, t->outlen);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* the launcher is gone: the session is over */
			t->outlen = 0;
			t->gone = true;
			t->done = true;
			return;
		}
		memmove(t->outq, t->outq + w, t->outlen - (size_t)w);
		t->outlen -= (size_t)w;
	}
}

static void send_obj(struct tui *t, json_object *o)
{
	if (!o)
		return;
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	if (s && t->outlen + n + 1 <= OUTQ_MAX) {
		if (!t->outq)
			t->outq = malloc(OUTQ_MAX);
		if (t->outq) {
			memcpy(t->outq + t->outlen, s, n);
			t->outq[t->outlen + n] = '\n';
			t->outlen += n + 1;
		}
	}
	json_object_put(o);
	tui_flush_out(t);
}

void tui_send_type(struct tui *t, const char *type)
{
	json_object *o = json_object_new_object();
	if (o)
		json_object_object_add(o, "type", json_object_new_string(type));
	send_obj(t, o);
}

/* ---- the activity ring ---------------------------------------------------------------- */

struct act_row *tui_act_at(struct tui *t, size_t i)
{
	return &t->rows[(t->first + i) % ACT_MAX];
}

bool tui_act_matches(const struct tui *t, const struct act_row *r)
{
	if (!t->filter[0])
		return true;
	return strcasestr(r->what, t->filter) || strcasestr(r->rule, t->filter) ||
	       strcasestr(r->source, t->filter) || strcasestr(r->decision, t->filter) ||
	       strstr(r->time, t->filter);
}

static void act_push(struct tui *t, const char *time_s, const char *source, const char *decision,
		     const char *what, const char *rule)
{
	size_t wn = strnlen(what ? what : "", TEXT_MAX), rn = strnlen(rule ? rule : "", 256);
	char *buf = malloc(wn + rn + 2);
	if (!buf)
		return;
	memcpy(buf, what ? what : "", wn);
	buf[wn] = '\0';
	memcpy(buf + wn + 1, rule ? rule : "", rn);
	buf[wn + 1 + rn] = '\0';
	struct act_row *r;
	if (t->nrows < ACT_MAX) {
		r = tui_act_at(t, t->nrows);
		t->nrows++;
	} else {
		r = tui_act_at(t, 0);
		free(r->what);
		t->first = (t->first + 1) % ACT_MAX;
	}
	memset(r, 0, sizeof *r);
	snprintf(r->time, sizeof r->time, "%s", time_s);
	snprintf(r->source, sizeof r->source, "%s", source ? source : "");
	snprintf(r->decision, sizeof r->decision, "%s", decision ? decision : "");
	r->what = buf;
	r->rule = buf + wn + 1;
	if (t->scroll > 0 && tui_act_matches(t, r))
		t->scroll++; /* the view stays where the user scrolled to */
	t->dirty = true;
}

static void local_time(char out[9], const char *rfc3339)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	time_t when = time(NULL);
	if (rfc3339 && sscanf(rfc3339, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon,
			      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) == 6) {
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		time_t t = timegm(&tm);
		if (t != (time_t)-1)
			when = t;
	}
	struct tm lt;
	if (!localtime_r(&when, &lt) || strftime(out, 9, "%H:%M:%S", &lt) == 0)
		snprintf(out, 9, "--:--:--");
}

/*
 * An event as an activity row: "exec PROG ARG..." (each a shell word, as `airlock log`
 * shows them), "ACTION PATH", "connect DST", its message; every part escaped.
 */
static void add_event(struct tui *t, json_object *ev)
{
	char *what = NULL, *rule = NULL;
	size_t wlen = 0, rlen = 0;
	const char *command = jstr(ev, "command"), *file = jstr(ev, "file"),
		   *dst = jstr(ev, "network_dst"), *message = jstr(ev, "message"),
		   *decision = jstr(ev, "decision"), *decided_by = jstr(ev, "decided_by"),
		   *rl = jstr(ev, "rule"), *source = jstr(ev, "source");
	json_object *args;
	bool has_what = true;
	FILE *w = open_memstream(&what, &wlen), *r = w ? open_memstream(&rule, &rlen) : NULL;
	if (!r) {
		if (w)
			fclose(w);
		free(what);
		return;
	}
	if (command) {
		fputs("exec ", w);
		termtext_put_word(w, command);
		if (json_object_object_get_ex(ev, "args", &args) &&
		    json_object_is_type(args, json_type_array)) {
			size_t n = json_object_array_length(args);
			for (size_t i = 0; i < n && ftell(w) < TEXT_MAX; i++) {
				json_object *a = json_object_array_get_idx(args, i);
				fputc(' ', w);
				if (json_object_is_type(a, json_type_string))
					termtext_put_word(w, json_object_get_string(a));
				else
					fputc('?', w);
			}
		}
		json_object *tr;
		if (json_object_object_get_ex(ev, "truncated", &tr) && json_object_get_boolean(tr))
			fputs(" ...", w);
	} else if (file) {
		const char *action = jstr(ev, "action");
		termtext_put_text(w, action ? action : "open");
		fputc(' ', w);
		termtext_put_word(w, file);
	} else if (dst) {
		fputs("connect ", w);
		termtext_put_text(w, dst);
	} else {
		has_what = false;
	}
	if (message) {
		if (has_what)
			fputs("  - ", w);
		termtext_put_text(w, message);
	} else if (!has_what) {
		fputs("(event)", w);
	}
	int by = channel_decided_by_parse(decided_by);
	if (by >= 0 && by != CHANNEL_BY_POLICY && (by != CHANNEL_BY_DEFAULT || !rl)) {
		termtext_put_text(r, decided_by);
		if (rl)
			fputc(' ', r);
	}
	termtext_put_text(r, rl);
	bool ok = fclose(w) == 0;
	ok = fclose(r) == 0 && ok;
	if (ok) {
		char tm[9];
		cut_units(what, TEXT_MAX);
		cut_units(rule, 256);
		local_time(tm, jstr(ev, "timestamp"));
		act_push(t, tm, source ? source : "?", decision, what, rule);
	}
	free(what);
	free(rule);
}

static void add_local(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_local(struct tui *t, const char *fmt, ...)
{
	char msg[512], tm[9];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	local_time(tm, NULL);
	act_push(t, tm, "tui", NULL, msg, NULL);
}

/* ---- the approval queue --------------------------------------------------------------- */

static void ask_free(struct ask *a)
{
	free(a->who);
	free(a->what);
	free(a->rule);
	free(a->reason);
}

static struct ask *ask_find(struct tui *t, int64_t id, size_t *idx)
{
	for (size_t i = 0; i < t->nasks; i++)
		if (t->asks[i].id == id) {
			if (idx)
				*idx = i;
			return &t->asks[i];
		}
	return NULL;
}

static void add_ask(struct tui *t, json_object *o)
{
	int64_t id, pid = 0, timeout = -1;
	if (!jint(o, "id", &id)) {
		t->bad_lines++;
		return;
	}
	(void)jint(o, "pid", &pid);
	(void)jint(o, "timeout_ms", &timeout);
	struct ask *a = ask_find(t, id, NULL);
	if (a) {
		ask_free(a); /* sent again: the newer wins */
	} else {
		if (t->nasks >= ASK_MAX) {
			t->bad_lines++;
			return;
		}
		a = &t->asks[t->nasks++];
		a->sent = NULL;
	}
	a->id = id;
	a->pid = pid;
	a->who = shown_text(jstr(o, "who"), TEXT_MAX);
	a->what = shown_text(jstr(o, "what"), TEXT_MAX);
	a->rule = shown_text(jstr(o, "rule"), 512);
	a->reason = shown_text(jstr(o, "reason"), TEXT_MAX);
	a->deadline = timeout >= 0 ? tui_now_ms() + timeout : 0;
	a->seq = ++t->ask_seq;
	t->dirty = true;
}

static void drop_ask(struct tui *t, int64_t id)
{
	size_t i;
	struct ask *a = ask_find(t, id, &i);
	if (!a)
		return;
	ask_free(a);
	memmove(&t->asks[i], &t->asks[i + 1], (t->nasks - i - 1) * sizeof *a);
	t->nasks--;
	t->dirty = true;
}

/* The ask the panel shows: the oldest one not answered yet, else the oldest. */
struct ask *tui_current_ask(const struct tui *t)
{
	for (size_t i = 0; i < t->nasks; i++)
		if (!t->asks[i].sent)
			return &t->asks[i];
	return t->nasks ? &t->asks[0] : NULL;
}

static void set_note(struct tui *t, const char *msg)
{
	snprintf(t->note, sizeof t->note, "%s", msg);
	t->note_until = tui_now_ms() + NOTE_MS;
	t->dirty = true;
}

/*
 * Y/N/A/B: answers the ask the panel showed when the key came — never one that took its
 * place since (it went, was answered, or was sent again), nor one shown for less than
 * GUARD_MS, nor, with an allow, one whose who and what were not all on screen.
 */
void tui_answer(struct tui *t, enum control_answer ans)
{
	struct ask *a = NULL;
	for (size_t i = 0; t->shown.seq && i < t->nasks && !a; i++)
		if (t->asks[i].seq == t->shown.seq)
			a = &t->asks[i];
	if (!a) {
		if (t->shown.seq) /* it went (or was sent again) since the screen showed it */
			set_note(t, "key ignored: the request changed; read the one now shown");
		return;
	}
	if (a->sent)
		return;
	if (tui_now_ms() - t->shown.since < GUARD_MS) {
		set_note(t, "key ignored: the request just changed; read it first");
		return;
	}
	if (!t->shown.whole && control_answer_allows(ans)) {
		set_note(t, "Y/A refused: the request is not all on screen");
		return;
	}
	json_object *o = json_object_new_object();
	if (!o)
		return;
	json_object_object_add(o, "type", json_object_new_string("answer"));
	json_object_object_add(o, "id", json_object_new_int64(a->id));
	json_object_object_add(o, "answer", json_object_new_string(control_answer_name(ans)));
	a->sent = control_answer_name(ans);
	t->note_until = 0;
	send_obj(t, o);
	t->dirty = true;
}
/* ---- the control stream: receiving ---------------------------------------------------- */

/*
 * One handler per message type the launcher sends (control.h); each returns false when the
 * message lacks what it needs (a bad line).
 */
static bool on_event(struct tui *t, json_object *o)
{
	json_object *ev;
	if (!json_object_object_get_ex(o, "event", &ev) || !json_object_is_type(ev, json_type_object))
		return false;
	add_event(t, ev);
	return true;
}

static bool on_ask(struct tui *t, json_object *o)
{
	add_ask(t, o); /* counts its own bad lines */
	return true;
}

static bool on_answered(struct tui *t, json_object *o)
{
	int64_t id;
	if (!jint(o, "id", &id))
		return false;
	drop_ask(t, id);
	return true;
}

static bool on_status(struct tui *t, json_object *o)
{
	(void)jint(o, "allow", &t->allow);
	(void)jint(o, "deny", &t->deny);
	(void)jint(o, "asked", &t->asked);
	(void)jint(o, "pending", &t->pending);
	(void)jint(o, "egress_up", &t->up);
	(void)jint(o, "egress_down", &t->down);
	(void)jint(o, "attached", &t->attached);
	t->have_status = true;
	return true;
}

static bool on_hello(struct tui *t, json_object *o)
{
	const char *s = jstr(o, "session"), *agent = jstr(o, "agent");
	int64_t v = CONTROL_VERSION;
	json_object *hl;
	snprintf(t->session, sizeof t->session, "%s", s ? s : "");
	free(t->agent);
	t->agent = shown_text(agent, TEXT_MAX);
	t->headless = json_object_object_get_ex(o, "headless", &hl) && json_object_get_boolean(hl);
	if (jint(o, "version", &v) && v != CONTROL_VERSION)
		add_local(t, "the session speaks control protocol version %" PRId64
			     "; this airlock speaks %d", v, CONTROL_VERSION);
	return true;
}

static bool on_skipped(struct tui *t, json_object *o)
{
	int64_t n = 0;
	(void)jint(o, "events", &n);
	add_local(t, "%" PRId64 " event(s) not shown: this view fell behind (the log has them)", n);
	return true;
}

static bool on_end(struct tui *t, json_object *o)
{
	int64_t st = 0;
	(void)jint(o, "status", &st);
	t->ended = true;
	t->end_status = st;
	return true;
}

static const struct {
	const char *type;
	bool (*fn)(struct tui *t, json_object *o);
} handlers[] = {
	{ "event", on_event },
	{ "ask", on_ask },
	{ "answered", on_answered },
	{ "status", on_status },
	{ "hello", on_hello },
	{ "skipped", on_skipped },
	{ "end", on_end },
};

/* One line from the launcher (its newline taken off): a JSON object, applied by its type. */
static void handle_line(struct tui *t, const char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	struct json_tokener *tok = json_tokener_new();
	if (!tok)
		return;
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	bool whole = o && json_tokener_get_error(tok) == json_tokener_success &&
		     json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	const char *type = whole && json_object_is_type(o, json_type_object) ? jstr(o, "type") : NULL;
	size_t i = 0;
	while (type && i < sizeof handlers / sizeof handlers[0] && strcmp(type, handlers[i].type))
		i++;
	if (!type || i == sizeof handlers / sizeof handlers[0] || !handlers[i].fn(t, o))
		t->bad_lines++;
	json_object_put(o);
	t->dirty = true;
}

/* Reads what the control socket has; returns false at its end (or when it broke the protocol). */
bool tui_read_control(struct tui *t)
{
	for (;;) {
		size_t room = CONTROL_MAX_LINE - t->inlen;
		ssize_t r = recv(t->o->control_fd, t->in + t->inlen, room, MSG_DONTWAIT);
		if (r < 0 && errno == ENOTSOCK)
			r = read(t->o->control_fd, t->in + t->inlen, room);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return true;
			return false; /* ECONNRESET and the like: the session is gone */
		}
		if (r == 0)
			return false;
		size_t scan = t->inlen, start = 0;
		t->inlen += (size_t)r;
		for (size_t i = scan; i < t->inlen; i++) {
			if (t->in[i] != '\n')
				continue;
			handle_line(t, t->in + start, i - start);
			start = i + 1;
			if (t->ended)
				break; /* the launcher closes after "end" */
		}
		memmove(t->in, t->in + start, t->inlen - start);
		t->inlen -= start;
		if (t->ended)
			return false;
		if (t->inlen >= CONTROL_MAX_LINE) {
			t->rc = 2;
			return false;
		}
		if ((size_t)r < room)
			return true;
	}
}


/* ---- the model's memory --------------------------------------------------------------- */

int tui_model_init(struct tui *t)
{
	t->rows = calloc(ACT_MAX, sizeof *t->rows);
	t->asks = calloc(ASK_MAX, sizeof *t->asks);
	t->in = malloc(CONTROL_MAX_LINE);
	return t->rows && t->asks && t->in ? 0 : -ENOMEM;
}

void tui_model_free(struct tui *t)
{
	if (t->rows) {
		for (size_t i = 0; i < t->nrows; i++)
			free(tui_act_at(t, i)->what);
		free(t->rows);
	}
	for (size_t i = 0; i < t->nasks; i++)
		ask_free(&t->asks[i]);
	free(t->asks);
	free(t->agent);
	free(t->in);
	free(t->outq);
}
