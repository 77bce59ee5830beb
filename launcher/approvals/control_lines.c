/* control_lines.c — the control socket's lines (control.h's protocol) built and parsed with json-c; see control_lines.h. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/utf8.h"
#include "launcher/approvals/control_lines.h"

static const char *json_text(json_object *o, size_t *len)
{
	return json_object_to_json_string_length(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}

/* o as one line (malloc'ed, newline-terminated); consumes o. */
static char *line_of(json_object *o, size_t *len)
{
	size_t n = 0;
	const char *t = o ? json_text(o, &n) : NULL;
	char *line = t ? malloc(n + 1) : NULL;
	if (line) {
		memcpy(line, t, n);
		line[n] = '\n';
		*len = n + 1;
	}
	json_object_put(o);
	return line;
}

static void add_opt(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

/*
 * text (len bytes from the sandbox: any bytes) as a JSON string whose text
 * takes at most max bytes once json-c has escaped it (utf8_json_cost()),
 * cut at a character, "..." added when cut; invalid UTF-8 becomes U+FFFD, as
 * in the audit log, so every line is JSON (RFC 8259 section 8.1).  Bounding
 * the escaped text, not the raw bytes, bounds the line: 4 KiB of control
 * characters would otherwise be 24 KiB of \u00XX.
 */
static json_object *cut_string(const char *text, size_t len, size_t max, bool *cut)
{
	_Static_assert(CONTROL_FIELD_MAX <= CONTROL_ASK_TEXT_MAX, "cut_string's buffer");
	_Static_assert(CONTROL_HELLO_AGENT_MAX <= CONTROL_ASK_TEXT_MAX, "cut_string's buffer");
	const unsigned char *u = (const unsigned char *)text;
	char buf[CONTROL_ASK_TEXT_MAX + 4];
	size_t i = 0, o = 0, cost = 0;
	while (i < len) {
		long l = utf8_seq(u + i, len - i);
		size_t n = l > 0 ? (size_t)l : (size_t)-l;
		const char *src = l > 0 ? text + i : UTF8_REPLACEMENT;
		size_t sl = l > 0 ? n : 3, c = l > 0 ? utf8_json_cost(u + i, n) : 3;
		if (cost + c > max || o + sl > max)
			break;
		memcpy(buf + o, src, sl);
		o += sl;
		cost += c;
		i += n;
	}
	if (i < len) {
		memcpy(buf + o, "...", 3);
		o += 3;
		*cut = true;
	}
	return json_object_new_string_len(buf, (int)o);
}

char *control_line_hello(const struct control_info *info, size_t *len)
{
	char started[40];
	struct timespec ts;
	struct tm tm;
	bool cut = false;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t k = strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(started + k, sizeof started - k, ".%03ldZ", ts.tv_nsec / 1000000);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("hello"));
	json_object_object_add(o, "version", json_object_new_int(CONTROL_VERSION));
	add_opt(o, "session", info->session);
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	const char *agent = info->agent ? info->agent : "";
	json_object_object_add(o, "agent",
			       cut_string(agent, strlen(agent), CONTROL_HELLO_AGENT_MAX, &cut));
	add_opt(o, "log", info->log ? info->log : "");
	json_object_object_add(o, "ask_timeout", json_object_new_int((int)info->ask_timeout));
	json_object_object_add(o, "headless", json_object_new_boolean(info->headless));
	add_opt(o, "started", started);
	return line_of(o, len);
}

char *control_line_status(const struct control_status *st, unsigned attached, size_t *len)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("status"));
	json_object_object_add(o, "allow", json_object_new_int64((int64_t)st->allow));
	json_object_object_add(o, "deny", json_object_new_int64((int64_t)st->deny));
	json_object_object_add(o, "asked", json_object_new_int64((int64_t)st->asked));
	json_object_object_add(o, "pending", json_object_new_int64((int64_t)st->pending));
	json_object_object_add(o, "egress_up", json_object_new_int64((int64_t)st->egress_up));
	json_object_object_add(o, "egress_down", json_object_new_int64((int64_t)st->egress_down));
	json_object_object_add(o, "attached", json_object_new_int((int)attached));
	return line_of(o, len);
}

/* An audit event's args, the first CONTROL_EVENT_ARGS, each cut to a quarter of CONTROL_FIELD_MAX. */
static json_object *cut_array(json_object *v, bool *cut)
{
	size_t n = json_object_array_length(v);
	json_object *nv = json_object_new_array();
	*cut |= n > CONTROL_EVENT_ARGS;
	for (size_t i = 0; i < n && i < CONTROL_EVENT_ARGS; i++) {
		json_object *a = json_object_array_get_idx(v, i);
		const char *t = json_object_get_string(a);
		json_object_array_add(nv, cut_string(t ? t : "", t ? strlen(t) : 0,
						     CONTROL_FIELD_MAX / 4, cut));
	}
	return nv;
}

/*
 * An audit event for the stream, no longer than CONTROL_EVENT_MAX bytes or
 * so: when line is longer, its strings are cut to CONTROL_FIELD_MAX bytes,
 * its args to the first CONTROL_EVENT_ARGS, and "cut":true says so (the log
 * keeps the whole line).  Returns a new object, or NULL.
 */
static json_object *event_object(const char *line, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *ev = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL;
	json_tokener_free(tok);
	if (!json_object_is_type(ev, json_type_object) || len <= CONTROL_EVENT_MAX)
		return ev;
	json_object *out = json_object_new_object();
	bool cut = false;
	json_object_object_foreach(ev, key, v)
	{
		json_object *nv;
		if (json_object_is_type(v, json_type_string))
			nv = cut_string(json_object_get_string(v), (size_t)json_object_get_string_len(v),
					CONTROL_FIELD_MAX, &cut);
		else if (json_object_is_type(v, json_type_array))
			nv = cut_array(v, &cut);
		else
			nv = json_object_get(v);
		json_object_object_add(out, key, nv);
	}
	if (cut)
		json_object_object_add(out, "cut", json_object_new_boolean(1));
	json_object_put(ev);
	return out;
}

char *control_line_event(const char *line, size_t line_len, size_t *len)
{
	json_object *o = json_object_new_object(), *ev = event_object(line, line_len);
	if (!o || !ev) {
		json_object_put(o);
		json_object_put(ev);
		return NULL;
	}
	json_object_object_add(o, "type", json_object_new_string("event"));
	json_object_object_add(o, "event", ev);
	return line_of(o, len);
}

char *control_line_ask(uint64_t id, pid_t pid, const char *who, const char *what, const char *rule,
		       const char *reason, long timeout_ms, size_t *len)
{
	bool cut = false;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("ask"));
	json_object_object_add(o, "id", json_object_new_int64((int64_t)id));
	json_object_object_add(o, "pid", json_object_new_int((int)pid));
	who = who ? who : "";
	what = what ? what : "";
	json_object_object_add(o, "who", cut_string(who, strlen(who), CONTROL_ASK_TEXT_MAX, &cut));
	json_object_object_add(o, "what", cut_string(what, strlen(what), CONTROL_ASK_TEXT_MAX, &cut));
	add_opt(o, "rule", rule);
	add_opt(o, "reason", reason);
	json_object_object_add(o, "timeout_ms", json_object_new_int64(timeout_ms));
	if (cut)
		json_object_object_add(o, "cut", json_object_new_boolean(1));
	return line_of(o, len);
}

char *control_line_answered(uint64_t id, const char *decision, const char *decided_by, size_t *len)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("answered"));
	json_object_object_add(o, "id", json_object_new_int64((int64_t)id));
	add_opt(o, "decision", decision);
	add_opt(o, "decided_by", decided_by);
	return line_of(o, len);
}

/* ---- what a client sends ------------------------------------------------------------ */

static bool parse_answer(const char *s, enum control_answer *a)
{
	for (int i = 0; i < CONTROL_ANSWER_MAX; i++)
		if (strcmp(s, control_answer_name((enum control_answer)i)) == 0) {
			*a = (enum control_answer)i;
			return true;
		}
	return false;
}

/* The one JSON value of line, or NULL when it is not whole or more than blanks follow it. */
static json_object *parse_one(const char *line, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL;
	bool complete = tok && json_tokener_get_error(tok) == json_tokener_success;
	if (complete) { /* one object per line: only blanks may follow it */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			complete &= line[i] == ' ' || line[i] == '\t' || line[i] == '\r';
	}
	json_tokener_free(tok);
	if (!complete) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int refuse(struct control_request *out, const char *why)
{
	out->why = why;
	return -EBADMSG;
}

int control_line_parse(const char *line, size_t len, struct control_request *out)
{
	json_object *o = parse_one(line, len), *v, *id;
	memset(out, 0, sizeof *out);
	int r = 0;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "type", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		r = refuse(out, "a control message that is not a JSON object with a \"type\" was dropped");
	} else if (strcmp(json_object_get_string(v), "attach") == 0) {
		out->type = CONTROL_REQUEST_ATTACH;
	} else if (strcmp(json_object_get_string(v), "answer") == 0) {
		out->type = CONTROL_REQUEST_ANSWER;
		if (!json_object_object_get_ex(o, "id", &id) || !json_object_is_type(id, json_type_int) ||
		    !json_object_object_get_ex(o, "answer", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    !parse_answer(json_object_get_string(v), &out->answer))
			r = refuse(out, "a control answer without a valid id and answer was dropped");
		else
			out->id = (uint64_t)json_object_get_int64(id);
	} else if (strcmp(json_object_get_string(v), "quit") == 0) {
		out->type = CONTROL_REQUEST_QUIT;
	} else {
		r = refuse(out, "a control message of an unknown type was dropped");
	}
	json_object_put(o);
	return r;
}
