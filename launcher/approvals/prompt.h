/*
 * prompt.h — the one-line prompt on /dev/tty (approve.h's APPROVE_PROMPT) and
 * the relay of the agent's terminal around it.  Internal to
 * launcher/approvals: approve.c owns one, decides what the keys mean for its
 * queue, and tells it what to show.
 *
 * The terminal is shared with the agent, which can write to it (and so can
 * make the terminal answer queries): the prompt resets the terminal's state
 * before it shows, escapes text from the sandbox as `airlock log` does
 * (core/termtext.h: controls, bidi and invisible characters, bytes that are
 * not UTF-8; an exec's arguments as shell words, events_subject()), and
 * takes an answer only as one key read on its own at least PROMPT_GUARD_MS
 * after it showed.
 */
#ifndef AIRLOCK_APPROVALS_PROMPT_H
#define AIRLOCK_APPROVALS_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A prompt takes keys only this long after it shows: a terminal's answer to
 * a query the agent wrote just before must not answer it.
 */
#define PROMPT_GUARD_MS 300

struct prompt {
	int tty;          /* /dev/tty (non-blocking), or -1: none, or it hung up */
	int pty;          /* the agent's terminal (master side, borrowed), or -1: none, or it ended */
	int ep;           /* borrowed: the epoll both are watched in */
	bool pty_reading; /* the relay reads the agent's terminal (not while a prompt is up) */
	bool shown;       /* an ask is on the screen, waiting for its key */
	long long shown_at; /* when it was shown, CLOCK_MONOTONIC ms */
};

/* What the prompt shows of the ask at the head of the queue.  Strings borrowed. */
struct prompt_ask {
	pid_t pid;          /* the asking process */
	bool from_launcher; /* asked by the launcher itself (the egress proxy), not a process */
	const char *what;   /* "exec git push", "read /w/.env", "connect h:443"; NULL: "?" */
	const char *rule;   /* "FILE:LINE", or "" for the policy's default */
	const char *reason; /* the rule's reason, or NULL */
	size_t more;        /* other asks waiting behind it */
};

/* What a read from the terminal means for the queue. */
enum prompt_key {
	PROMPT_KEY_NONE,          /* nothing: keys relayed to the agent, dropped, or not an answer */
	PROMPT_KEY_HUNG_UP,       /* the terminal is gone: nobody answers here any more */
	PROMPT_KEY_INTERRUPT,     /* Ctrl-C: deny (the caller then gives the agent its ^C) */
	PROMPT_KEY_ALLOW,         /* y */
	PROMPT_KEY_DENY,          /* n */
	PROMPT_KEY_ALLOW_SESSION, /* a: and remember it for the session */
	PROMPT_KEY_DENY_SESSION,  /* b: and remember it for the session */
	PROMPT_KEY_MAX
};

/*
 * Opens /dev/tty and watches it in ep (borrowed); with pty >= 0 (borrowed)
 * relays the agent's terminal to and from it.  Without a terminal p->tty is
 * -1 and nobody answers here.  Never fails otherwise.
 */
void prompt_open(struct prompt *p, int ep, int pty);

/* Closes the terminal.  The pty is the caller's. */
void prompt_close(struct prompt *p);

/* True when a prompt could be shown now: a terminal, and nothing on the screen. */
bool prompt_ready(const struct prompt *p);

/* Shows ask (at now_ms) and waits for its key: the terminal is reset first (see the top). */
void prompt_show(struct prompt *p, const struct prompt_ask *ask, long long now_ms);

/* The ask on the screen was answered, here or elsewhere: the next may show. */
void prompt_hide(struct prompt *p);

/* Writes a line to the terminal, when there is one (printf(3) format). */
void prompt_say(const struct prompt *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The terminal is readable: reads it (at now_ms).  Without a prompt up, the
 * keys go to the agent's terminal.  With one, the answer is echoed ("y:
 * allowed"); what is not one key is dropped, or told how to answer.
 */
enum prompt_key prompt_read(struct prompt *p, long long now_ms);

/* Gives len bytes to the agent's terminal as if typed there (its ^C after PROMPT_KEY_INTERRUPT). */
void prompt_to_agent(const struct prompt *p, const char *data, size_t len);

/* The agent's terminal is readable: its output to the user's, unless a prompt is up. */
void prompt_relay(struct prompt *p);

/* After the queue changed: the relay reads the agent's terminal only while no prompt is up. */
void prompt_relay_interest(struct prompt *p);

/* Copies what the agent wrote and the relay has not shown yet (the agent ended). */
void prompt_drain_agent(struct prompt *p);

#endif
