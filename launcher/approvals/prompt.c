/* prompt.c — the one-line prompt on /dev/tty and the relay of the agent's terminal around it (see prompt.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <termios.h>
#include <unistd.h>

#include "core/termtext.h"
#include "launcher/approvals/prompt.h"

static int watch(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

void prompt_open(struct prompt *p, int ep, int pty)
{
	*p = (struct prompt){ .tty = -1, .pty = -1, .ep = ep };
	p->tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (p->tty >= 0 && watch(ep, p->tty) < 0) {
		close(p->tty);
		p->tty = -1;
	}
	if (p->tty >= 0 && pty >= 0 && watch(ep, pty) == 0) {
		p->pty = pty;
		p->pty_reading = true;
	}
}

void prompt_close(struct prompt *p)
{
	if (p->tty >= 0)
		close(p->tty);
	p->tty = -1;
}

bool prompt_ready(const struct prompt *p)
{
	return p->tty >= 0 && !p->shown;
}

void prompt_hide(struct prompt *p)
{
	p->shown = false;
}

void prompt_say(const struct prompt *p, const char *fmt, ...)
{
	va_list ap;
	if (p->tty < 0)
		return;
	va_start(ap, fmt);
	vdprintf(p->tty, fmt, ap);
	va_end(ap);
}

static void comm_of(pid_t pid, char *out, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	out[0] = '\0';
	if (f) {
		if (fgets(out, (int)cap, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/*
 * Text from the sandbox (paths, arguments, process names) on the human's
 * terminal, escaped by termtext_text() (core/termtext.h) as `airlock log`
 * and the TUI show it: no escape sequence can redraw or forge the prompt, no
 * bidi or invisible character can make the request read as another.
 */
void prompt_show(struct prompt *p, const struct prompt_ask *ask, long long now_ms)
{
	char comm[64];
	if (!prompt_ready(p))
		return;
	comm_of(ask->pid, comm, sizeof comm);
	char *what = termtext_text(ask->what), *who = termtext_text(comm),
	     *rule = termtext_text(ask->rule), *reason = termtext_text(ask->reason);
	tcflush(p->tty, TCIFLUSH); /* what was typed (or answered) before the prompt is not for it */
	/*
	 * The agent wrote to this terminal just before: whatever state it left
	 * (hidden or same-colour text, line-drawing characters, a scroll region,
	 * origin or insert mode, a hidden cursor) is reset first, so the prompt
	 * shows as written.  DECSTR (soft reset), then each part again for
	 * terminals without it: SGR 0, G0 = ASCII and SI, margins (cursor kept),
	 * insert mode off, autowrap and cursor on (ECMA-48, VT510 manual).
	 */
	dprintf(p->tty, "\033[!p\0337\033[r\0338\033[0m\033(B\017\033[4l\033[?7h\033[?25h");
	if (ask->from_launcher)
		dprintf(p->tty, "\r\nairlock: the sandbox asks to %s\r\n", what ? what : "?");
	else
		dprintf(p->tty, "\r\nairlock: pid %d (%s) asks to %s\r\n", (int)ask->pid,
			who && who[0] ? who : "?", what ? what : "?");
	dprintf(p->tty, "  rule: %s%s%s\r\n", rule && rule[0] ? rule : "the policy's default",
		ask->reason ? " - " : "", ask->reason ? (reason ? reason : "?") : "");
	if (ask->more)
		dprintf(p->tty, "  (%zu more waiting)\r\n", ask->more);
	dprintf(p->tty, "  [y] allow  [n] deny  [a] allow for this session  [b] deny for this session > ");
	free(what);
	free(who);
	free(rule);
	free(reason);
	p->shown = true;
	p->shown_at = now_ms;
}

/* Writes all of len bytes to fd (a terminal), waiting when it is full. */
static void put_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = { fd, POLLOUT, 0 };
			poll(&pf, 1, 100);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		len -= (size_t)w;
	}
}

void prompt_to_agent(const struct prompt *p, const char *data, size_t len)
{
	if (p->pty >= 0)
		put_all(p->pty, data, len);
}

/* One key read on its own, as an answer; PROMPT_KEY_NONE for anything else. */
static enum prompt_key key_of(const char *buf, ssize_t n)
{
	switch (n == 1 ? buf[0] | 0x20 : 0) { /* either case */
	case 'y': return PROMPT_KEY_ALLOW;
	case 'n': return PROMPT_KEY_DENY;
	case 'a': return PROMPT_KEY_ALLOW_SESSION;
	case 'b': return PROMPT_KEY_DENY_SESSION;
	default: return PROMPT_KEY_NONE;
	}
}

/*
 * Keys from the human's terminal.  With a prompt up, an answer is one key
 * read on its own — y, n, a or b, either case — at least PROMPT_GUARD_MS
 * after the prompt showed: a terminal's reply to a query (ESC ... "3.3a"
 * ... or "...$y") arrives as one longer read and is dropped whole, so the
 * agent cannot answer its own ask through the terminal.  Without a prompt,
 * keys go to the agent's terminal.
 */
enum prompt_key prompt_read(struct prompt *p, long long now_ms)
{
	char buf[4096];
	ssize_t n = read(p->tty, buf, sizeof buf);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		/* the terminal hung up: nobody is left to answer here */
		epoll_ctl(p->ep, EPOLL_CTL_DEL, p->tty, NULL);
		prompt_close(p);
		p->shown = false;
		return PROMPT_KEY_HUNG_UP;
	}
	if (n < 0)
		return PROMPT_KEY_NONE;
	if (!p->shown) {
		prompt_to_agent(p, buf, (size_t)n);
		return PROMPT_KEY_NONE;
	}
	if (n == 1 && buf[0] == 0x03) {
		/* Ctrl-C: no, and the agent gets its interrupt as on its own terminal */
		dprintf(p->tty, "^C: denied\r\n");
		return PROMPT_KEY_INTERRUPT;
	}
	if (now_ms - p->shown_at < PROMPT_GUARD_MS)
		return PROMPT_KEY_NONE;
	enum prompt_key k = key_of(buf, n);
	if (k == PROMPT_KEY_NONE)
		dprintf(p->tty, "\r\n  (one key: y, n, a or b) > ");
	else
		dprintf(p->tty, "%c: %s\r\n", buf[0] | 0x20,
			k == PROMPT_KEY_ALLOW || k == PROMPT_KEY_ALLOW_SESSION ? "allowed" : "denied");
	return k;
}

/* The agent's output, to the human's terminal. */
static void read_pty(struct prompt *p)
{
	char buf[16384];
	ssize_t n = read(p->pty, buf, sizeof buf);
	if (n > 0) {
		put_all(p->tty, buf, (size_t)n);
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		/* EIO: the agent's side is closed */
		epoll_ctl(p->ep, EPOLL_CTL_DEL, p->pty, NULL);
		p->pty_reading = false;
		p->pty = -1;
	}
}

void prompt_relay(struct prompt *p)
{
	if (p->pty >= 0 && p->pty_reading)
		read_pty(p);
}

void prompt_relay_interest(struct prompt *p)
{
	bool want = p->pty >= 0 && !p->shown;
	if (p->pty < 0 || want == p->pty_reading)
		return;
	struct epoll_event ev = { .events = want ? EPOLLIN : 0, .data.fd = p->pty };
	epoll_ctl(p->ep, EPOLL_CTL_MOD, p->pty, &ev);
	p->pty_reading = want;
}

void prompt_drain_agent(struct prompt *p)
{
	for (int i = 0; p->pty >= 0 && !p->shown && i < 1024; i++) {
		struct pollfd pf = { p->pty, POLLIN, 0 };
		if (poll(&pf, 1, 0) <= 0)
			break;
		read_pty(p);
	}
}
