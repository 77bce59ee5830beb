/*
 * control_lines.h — the control socket's protocol (control.h) as text: the
 * lines the launcher sends, built from their fields, and the lines a client
 * sends, parsed.  No sockets: control.c moves the lines, this says what is in
 * them.  Internal to launcher/approvals.
 */
#ifndef AIRLOCK_CONTROL_LINES_H
#define AIRLOCK_CONTROL_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "launcher/approvals/control.h"

#define CONTROL_HELLO_AGENT_MAX 2048 /* bytes of the agent's command line in the hello */

/*
 * Each builder returns one line, newline-terminated, malloc'ed (free it),
 * its length in *len; NULL when out of memory.
 */

/* {"type":"hello",...}: info, this process's pid, now as "started"; the agent cut to CONTROL_HELLO_AGENT_MAX. */
char *control_line_hello(const struct control_info *info, size_t *len);

/* {"type":"status",...}: the counts in st and attached. */
char *control_line_status(const struct control_status *st, unsigned attached, size_t *len);

/*
 * {"type":"event","event":EVENT}: line (an audit event, JSON text, line_len
 * bytes, no newline) as it is, or, when longer than CONTROL_EVENT_MAX, with
 * its strings cut to CONTROL_FIELD_MAX bytes and its args to the first
 * CONTROL_EVENT_ARGS, and "cut":true.  NULL also when line is not JSON.
 */
char *control_line_event(const char *line, size_t line_len, size_t *len);

/*
 * {"type":"ask",...}: who and what (NULL: "") cut to CONTROL_ASK_TEXT_MAX
 * bytes ("cut":true then); rule and reason NULL give null.
 */
char *control_line_ask(uint64_t id, pid_t pid, const char *who, const char *what, const char *rule,
		       const char *reason, long timeout_ms, size_t *len);

/* {"type":"answered",...}; NULL strings give null. */
char *control_line_answered(uint64_t id, const char *decision, const char *decided_by, size_t *len);

/* What a client asked for in one line. */
enum control_request_type {
	CONTROL_REQUEST_ATTACH,
	CONTROL_REQUEST_ANSWER,
	CONTROL_REQUEST_QUIT,
	CONTROL_REQUEST_TYPE_MAX
};

struct control_request {
	enum control_request_type type;
	uint64_t id;                /* CONTROL_REQUEST_ANSWER */
	enum control_answer answer; /* CONTROL_REQUEST_ANSWER */
	const char *why;            /* a refused line: what was wrong, for the log (static) */
};

/*
 * Parses one line a client sent (len bytes, no newline): one JSON object,
 * only blanks after it.  0 with *out filled, or -EBADMSG with out->why set.
 */
int control_line_parse(const char *line, size_t len, struct control_request *out);

#endif
