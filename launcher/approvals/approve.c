/* approve.c — the launcher's channel server: logs shim events, queues asks, answers them (human, session memory, headless rule, timeout). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/termtext.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/flood.h"
#include "launcher/log/audit.h"
#include "launcher/approvals/approve.h"
#include "launcher/approvals/prompt.h"
#include "launcher/approvals/events.h"
#include "proxy/accept.h"
#include "core/channel.h"

struct client {
	int fd;
	struct ucred peer; /* at connect; messages carry their own sender */
};

/* An ask waiting for its answer: the datagram is kept, the decoded message points into it. */
struct pending {
	int fd;              /* the shim's connection, or -1 for an ask made in the launcher */
	approve_done_fn done; /* an ask made in the launcher: told the answer instead of a shim */
	void *done_arg;
	pid_t pid;
	uint8_t *data; /* owned */
	size_t len;    /* of data */
	struct channel_msg m;
	long long since_ms;
	char *key; /* owned: rule + subject, for session memory */
	uint64_t id;    /* unique in the session: the control socket's name for it */
	bool published; /* shown to the control socket's clients */
};

/* An "A" or "B" answer, remembered for the rest of the session. */
struct memory {
	char *key; /* owned */
	enum policy_decision decision;
};

/* An answer just given: the same process asking the same again at once gets it again. */
struct recent {
	pid_t pid;
	char *key; /* owned */
	enum policy_decision decision;
	long long at_ms;
};

#define STR_(x) #x
#define STR(x) STR_(x)

#define RECENT 16
#define RECENT_MS 2000

struct approvals {
	struct approve_options opt;
	struct recent recent[RECENT];
	size_t recent_next;
	int listen_fd;
	int ep; /* epoll over the listening socket, the clients, the terminal and the agent's */
	struct prompt prompt; /* APPROVE_PROMPT: the terminal (prompt.tty -1 otherwise) */
	struct client *clients;
	size_t nclients, clients_cap;
	struct pending *queue;
	size_t nqueue, queue_cap;
	struct memory *mem;
	size_t nmem, mem_cap;
	struct approve_counts counts;
	uint64_t next_id;
	size_t queue_bytes;       /* of the waiting asks' messages (APPROVE_MAX_ASK_BYTES) */
	struct flood *bad_flood;  /* malformed messages and refused connections, per peer */
	struct flood *ask_flood;  /* asks refused for the bounds, per process */
	uint8_t buf[CHANNEL_MAX_MSG];
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Room for need elements of size bytes in items (capacity *cap), as grow_array(); out of memory aborts. */
static void *grow_or_die(void *items, size_t *cap, size_t need, size_t size)
{
	void *q = grow_array(items, cap, need, size, 8);
	if (!q) {
		fprintf(stderr, "airlock: out of memory\n");
		abort();
	}
	return q;
}

static int watch(struct approvals *a, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &ev);
}

/* ---- the audit log ---------------------------------------------------------------- */

static void count(struct approvals *a, enum policy_decision d)
{
	if (d == POLICY_ALLOW)
		a->counts.allow++;
	else
		a->counts.deny++;
}

static void log_msg(struct approvals *a, const struct channel_msg *m, pid_t pid,
		    enum policy_decision d, enum channel_decided_by by, long response_ms,
		    const char *message)
{
	count(a, d);
	events_log(a->opt.log, a->opt.img, m, pid, d, by, response_ms, message);
}

/* ---- answering ---------------------------------------------------------------------- */

static void send_answer(int fd, uint32_t id, enum policy_decision d, enum channel_decided_by by,
			int32_t rule)
{
	uint8_t out[64];
	int n = channel_encode_answer(out, sizeof out, id, d, by, rule);
	if (n > 0)
		(void)channel_send_buf(fd, out, (size_t)n);
}

static void note_recent(struct approvals *a, const struct pending *p, enum policy_decision d)
{
	struct recent *r = &a->recent[a->recent_next++ % RECENT];
	free(r->key);
	r->key = p->key ? strdup(p->key) : NULL;
	r->pid = p->pid;
	r->decision = d;
	r->at_ms = now_ms();
}

static const struct recent *recent_answer(const struct approvals *a, const struct pending *p)
{
	long long now = now_ms();
	for (size_t i = 0; p->key && i < RECENT; i++) {
		const struct recent *r = &a->recent[i];
		if (r->key && r->pid == p->pid && now - r->at_ms < RECENT_MS &&
		    strcmp(r->key, p->key) == 0)
			return r;
	}
	return NULL;
}

/* Removes queue entry i (answered, or its asker gone) and frees what it holds. */
static void unqueue(struct approvals *a, size_t i)
{
	struct pending *p = &a->queue[i];
	a->queue_bytes -= p->len;
	free(p->data);
	free(p->key);
	memmove(p, p + 1, (a->nqueue - i - 1) * sizeof *p);
	a->nqueue--;
	if (i == 0)
		prompt_hide(&a->prompt);
}

/* Answers queue entry i and removes it. */
static void resolve(struct approvals *a, size_t i, enum policy_decision d, enum channel_decided_by by)
{
	struct pending *p = &a->queue[i];
	note_recent(a, p, d);
	if (p->published)
		control_answered(a->opt.control, p->id, policy_decision_name(d),
				 channel_decided_by_name(by));
	if (p->done) {
		/* the caller logs its own event (the proxy: one per connection, with its bytes) */
		p->done(p->done_arg, d, channel_decided_by_name(by));
	} else {
		send_answer(p->fd, p->m.id, d, by, p->m.rule);
		log_msg(a, &p->m, p->pid, d, by, (long)(now_ms() - p->since_ms), NULL);
	}
	unqueue(a, i);
}

static const struct memory *recall(const struct approvals *a, const char *key)
{
	for (size_t i = 0; key && i < a->nmem; i++)
		if (strcmp(a->mem[i].key, key) == 0)
			return &a->mem[i];
	return NULL;
}

static void remember(struct approvals *a, const char *key, enum policy_decision d)
{
	if (!key || recall(a, key))
		return;
	a->mem = grow_or_die(a->mem, &a->mem_cap, a->nmem + 1, sizeof *a->mem);
	a->mem[a->nmem].key = strdup(key);
	a->mem[a->nmem].decision = d;
	if (a->mem[a->nmem].key)
		a->nmem++;
}

/* ---- the prompt ---------------------------------------------------------------------- */

/* Shows the head of the queue on the terminal, when there is one and nothing is shown yet. */
static void show_prompt(struct approvals *a)
{
	if (!prompt_ready(&a->prompt) || a->nqueue == 0)
		return;
	const struct pending *p = &a->queue[0];
	char rule[1100];
	struct prompt_ask ask = { .pid = p->pid, .from_launcher = p->done != NULL,
				  .what = events_subject(&p->m), .rule = rule, .more = a->nqueue - 1 };
	events_rule(a->opt.img, &p->m, rule, sizeof rule, &ask.reason);
	prompt_show(&a->prompt, &ask, now_ms());
	free((char *)ask.what);
}

/* Applies a remembered answer to every waiting ask with the same key. */
static void apply_memory(struct approvals *a)
{
	for (size_t i = 0; i < a->nqueue;) {
		const struct memory *mem = recall(a, a->queue[i].key);
		if (mem)
			resolve(a, i, mem->decision, CHANNEL_BY_SESSION);
		else
			i++;
	}
}

/* A key from the terminal: the answer to the ask on the screen. */
static void read_tty(struct approvals *a)
{
	enum prompt_key k = prompt_read(&a->prompt, now_ms());
	switch (k) {
	case PROMPT_KEY_NONE:
		return;
	case PROMPT_KEY_HUNG_UP:
		approve_attached(a);
		return;
	case PROMPT_KEY_INTERRUPT:
		resolve(a, 0, POLICY_DENY, CHANNEL_BY_HUMAN);
		apply_memory(a);
		prompt_to_agent(&a->prompt, "\003", 1);
		break;
	default: {
		enum policy_decision d = k == PROMPT_KEY_ALLOW || k == PROMPT_KEY_ALLOW_SESSION
						 ? POLICY_ALLOW
						 : POLICY_DENY;
		if (k == PROMPT_KEY_ALLOW_SESSION || k == PROMPT_KEY_DENY_SESSION)
			remember(a, a->queue[0].key, d);
		resolve(a, 0, d, CHANNEL_BY_HUMAN);
		apply_memory(a);
	}
	}
	show_prompt(a);
}

void approve_drain_agent(struct approvals *a)
{
	prompt_drain_agent(&a->prompt);
}

/* ---- messages ------------------------------------------------------------------------- */

/*
 * What "the same request" means for session memory: the rule and the
 * subject, with an exec's program resolved (execvp(3) retries each PATH
 * directory: /bin/git and /usr/bin/git are one request).
 */
static char *memory_key(const struct channel_msg *m)
{
	char *real = m->source == CHANNEL_SOURCE_EXEC ? realpath(m->program, NULL) : NULL;
	char *what = events_subject_as(m, real), *key = NULL;
	if (what && asprintf(&key, "%d\x1f%s", (int)m->rule, what) < 0)
		key = NULL;
	free(real);
	free(what);
	return key;
}

static void enqueue(struct approvals *a, struct pending p);

/*
 * Why a new ask of pid (len bytes) may not wait, or NULL when it may: the
 * session's asks, one process's and their bytes are bounded, so a process
 * that floods asks cannot grow the launcher without end nor crowd out the
 * asks of others.
 */
static const char *over_bound(const struct approvals *a, pid_t pid, size_t len)
{
	size_t mine = 0;
	for (size_t i = 0; i < a->nqueue; i++)
		mine += a->queue[i].pid == pid;
	if (mine >= APPROVE_MAX_ASKS_PER_PROCESS)
		return "refused at once: this process already has " STR(APPROVE_MAX_ASKS_PER_PROCESS)
		       " asks waiting (the bound per process)";
	if (a->nqueue >= APPROVE_MAX_ASKS)
		return "refused at once: " STR(APPROVE_MAX_ASKS) " asks already wait in this session "
		       "(the bound per session)";
	if (a->queue_bytes + len > APPROVE_MAX_ASK_BYTES)
		return "refused at once: the waiting asks already hold the session's bound of bytes";
	return NULL;
}

static void queue_ask(struct approvals *a, const struct client *c, pid_t pid, size_t len)
{
	struct pending p = { .fd = c->fd, .pid = pid, .since_ms = now_ms(), .len = len };
	const char *why = over_bound(a, pid, len);
	if (why) {
		struct channel_msg m;
		if (channel_decode(a->buf, len, &m) < 0)
			return;
		send_answer(c->fd, m.id, POLICY_DENY, CHANNEL_BY_DEFAULT, m.rule);
		a->counts.asked++;
		if (flood_admit(a->ask_flood, pid, now_ms()))
			log_msg(a, &m, pid, POLICY_DENY, CHANNEL_BY_DEFAULT, 0, why);
		else
			a->counts.deny++; /* counted, summarised later */
		return;
	}
	p.data = malloc(len);
	if (!p.data || channel_decode(memcpy(p.data, a->buf, len), len, &p.m) < 0) {
		free(p.data);
		return;
	}
	a->queue_bytes += len;
	enqueue(a, p);
}

int approve_ask_connect(struct approvals *a, const char *host, unsigned port, int32_t rule,
			approve_done_fn done, void *arg)
{
	/* the same message a shim would send, so prompt, memory and log treat both alike */
	struct channel_msg m = { .type = CHANNEL_ASK, .source = CHANNEL_SOURCE_CONNECT,
				 .action = CHANNEL_ACTION_CONNECT, .decision = POLICY_ASK,
				 .rule = rule, .host = host, .port = (uint16_t)port };
	struct pending p = { .fd = -1, .done = done, .done_arg = arg, .pid = 0,
			     .since_ms = now_ms() };
	uint8_t buf[512];
	int n = channel_encode(buf, sizeof buf, &m);
	if (n < 0)
		return n;
	p.data = malloc((size_t)n);
	if (!p.data)
		return -ENOMEM;
	memcpy(p.data, buf, (size_t)n);
	if (channel_decode(p.data, (size_t)n, &p.m) < 0) {
		free(p.data);
		return -EINVAL;
	}
	p.len = (size_t)n;
	a->queue_bytes += p.len;
	enqueue(a, p);
	return 0;
}

/*
 * The command line of pid (its first 4 KiB), each argument a shell word
 * (termtext_put_word()), spaces between them; malloc'ed, "" when it cannot
 * be read, NULL when out of memory.
 */
static char *cmdline_of(pid_t pid)
{
	char path[64], raw[4097];
	char *out = NULL;
	size_t len = 0;
	ssize_t n = -1;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, raw, sizeof raw - 1);
		close(fd);
	}
	while (n > 0 && raw[n - 1] == '\0')
		n--;
	raw[n > 0 ? n : 0] = '\0';
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(raw + i) + 1) {
		if (i > 0)
			fputc(' ', f);
		termtext_put_word(f, raw + i);
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Shows queue entry i to the control socket's clients. */
static void publish(struct approvals *a, struct pending *p)
{
	char rule[1100];
	const char *reason;
	char *what = events_subject(&p->m);
	char *who = p->done ? strdup("the sandbox's egress proxy") : cmdline_of(p->pid);
	events_rule(a->opt.img, &p->m, rule, sizeof rule, &reason);
	long left = (long)a->opt.ask_timeout * 1000 - (long)(now_ms() - p->since_ms);
	control_ask(a->opt.control, p->id, p->pid, who, what, rule[0] ? rule : NULL, reason,
		    left < 0 ? 0 : left);
	p->published = true;
	free(what);
	free(who);
}

static bool someone_answers(const struct approvals *a)
{
	return (a->opt.mode == APPROVE_PROMPT && a->prompt.tty >= 0) ||
	       (a->opt.control && control_attached(a->opt.control) > 0);
}

static void enqueue(struct approvals *a, struct pending p)
{
	p.key = memory_key(&p.m);
	p.id = ++a->next_id;
	a->counts.asked++;
	a->queue = grow_or_die(a->queue, &a->queue_cap, a->nqueue + 1, sizeof *a->queue);
	a->queue[a->nqueue++] = p;
	size_t i = a->nqueue - 1;
	const struct memory *mem = recall(a, p.key);
	const struct recent *again = recent_answer(a, &a->queue[i]);
	if (mem)
		resolve(a, i, mem->decision, CHANNEL_BY_SESSION);
	else if (again)
		resolve(a, i, again->decision, CHANNEL_BY_SESSION);
	else if (!someone_answers(a))
		resolve(a, i, a->opt.default_allow ? POLICY_ALLOW : POLICY_DENY, CHANNEL_BY_DEFAULT);
	else {
		if (a->opt.control)
			publish(a, &a->queue[i]);
		show_prompt(a);
	}
}

int approve_answer(struct approvals *a, uint64_t id, enum policy_decision d, bool remember_it)
{
	for (size_t i = 0; i < a->nqueue; i++) {
		if (a->queue[i].id != id)
			continue;
		if (remember_it)
			remember(a, a->queue[i].key, d);
		if (a->prompt.shown && i == 0)
			prompt_say(&a->prompt, "%s (answered elsewhere)\r\n",
				   d == POLICY_ALLOW ? "allowed" : "denied");
		resolve(a, i, d, CHANNEL_BY_HUMAN);
		apply_memory(a);
		show_prompt(a);
		return 0;
	}
	return -ENOENT;
}

void approve_attached(struct approvals *a)
{
	if (someone_answers(a))
		return;
	/* nobody is left to answer: what waits takes the headless rule */
	while (a->nqueue)
		resolve(a, 0, a->opt.default_allow ? POLICY_ALLOW : POLICY_DENY, CHANNEL_BY_DEFAULT);
}

static void drop_client(struct approvals *a, size_t idx)
{
	int fd = a->clients[idx].fd;
	/* its asks can no longer be answered: forget them, unlogged ones included */
	for (size_t i = 0; i < a->nqueue;) {
		if (a->queue[i].fd == fd) {
			if (a->queue[i].published)
				control_answered(a->opt.control, a->queue[i].id,
						 policy_decision_name(POLICY_DENY),
						 channel_decided_by_name(CHANNEL_BY_DEFAULT));
			/* the asker is gone: the action did not happen, and the log says so */
			if (!a->queue[i].done)
				log_msg(a, &a->queue[i].m, a->queue[i].pid, POLICY_DENY, CHANNEL_BY_DEFAULT,
					(long)(now_ms() - a->queue[i].since_ms),
					"the asking process went away before an answer");
			unqueue(a, i);
		} else {
			i++;
		}
	}
	epoll_ctl(a->ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	a->clients[idx] = a->clients[--a->nclients];
	show_prompt(a);
}

static void launcher_refusal(struct approvals *a, pid_t pid, const char *msg)
{
	(void)audit_launcher_note(a->opt.log, pid, policy_decision_name(POLICY_DENY), msg);
}

/* A bad message or a refused connection, logged and said at most FLOOD_BURST a second per peer. */
static void malformed(struct approvals *a, pid_t pid, const char *why)
{
	char msg[256];
	if (!flood_admit(a->bad_flood, pid, now_ms()))
		return;
	snprintf(msg, sizeof msg, "malformed message on the approval socket dropped: %s", why);
	fprintf(stderr, "airlock: %s (pid %d)\n", msg, (int)pid);
	launcher_refusal(a, pid, msg);
}

static void bad_summary(void *arg, pid_t pid, unsigned long n)
{
	char msg[200];
	snprintf(msg, sizeof msg, "%lu more malformed message(s) or refused connection(s) on the "
		 "approval socket%s, dropped unlogged", n, pid ? "" : " from processes no longer tracked");
	fprintf(stderr, "airlock: %s (pid %d)\n", msg, (int)pid);
	launcher_refusal(arg, pid, msg);
}

static void ask_summary(void *arg, pid_t pid, unsigned long n)
{
	char msg[200];
	snprintf(msg, sizeof msg, "%lu more ask(s) refused at once for the bounds on waiting asks%s, "
		 "not logged one by one", n, pid ? "" : " from processes no longer tracked");
	launcher_refusal(arg, pid, msg);
}

/* Reads every queued datagram of client idx; false when it went away. */
static bool serve_client(struct approvals *a, size_t idx)
{
	for (;;) {
		struct client *c = &a->clients[idx];
		struct channel_msg m;
		struct ucred sender;
		int r = channel_recv_from(c->fd, a->buf, sizeof a->buf, &m, &sender);
		pid_t pid = sender.pid > 0 ? sender.pid : c->peer.pid;
		if (r == -EAGAIN || r == -EWOULDBLOCK)
			return true;
		if (r == -EBADMSG || r == -EPROTO || r == -EMSGSIZE) {
			malformed(a, pid, m.why ? m.why : strerror(-r));
			continue;
		}
		if (r < 0)
			return false;
		if (m.type == CHANNEL_EVENT) {
			count(a, events_report(a->opt.log, a->opt.img, &m, pid));
		} else if (m.type == CHANNEL_ASK) {
			queue_ask(a, c, pid, (size_t)r);
		} else if (m.type != CHANNEL_HELLO) {
			malformed(a, pid, "a shim may send only events, asks and hellos");
		}
	}
}

static size_t connections_of(const struct approvals *a, pid_t pid)
{
	size_t n = 0;
	for (size_t i = 0; i < a->nclients; i++)
		n += a->clients[i].peer.pid == pid;
	return n;
}

static bool has_asks(const struct approvals *a, int fd)
{
	for (size_t i = 0; i < a->nqueue; i++)
		if (a->queue[i].fd == fd)
			return true;
	return false;
}

/*
 * The session holds APPROVE_MAX_CLIENTS connections and pid wants one more:
 * a connection of the process holding the most (more than pid would), one
 * with no ask waiting, is closed to make room, so that one process hoarding
 * connections cannot keep every other process's asks from the human.
 * Returns whether room was made.
 */
static bool make_room(struct approvals *a, pid_t pid)
{
	pid_t hog = 0;
	size_t most = connections_of(a, pid) + 1;
	for (size_t i = 0; i < a->nclients; i++) {
		size_t n = connections_of(a, a->clients[i].peer.pid);
		if (n > most) {
			most = n;
			hog = a->clients[i].peer.pid;
		}
	}
	for (size_t i = 0; hog && i < a->nclients; i++)
		if (a->clients[i].peer.pid == hog && !has_asks(a, a->clients[i].fd)) {
			malformed(a, hog, "a connection was closed to make room: this process holds the "
					  "most of the session's " STR(APPROVE_MAX_CLIENTS));
			drop_client(a, i);
			return true;
		}
	return false;
}

static void accept_all(struct approvals *a)
{
	for (;;) {
		int fd = accept_shed(a->listen_fd, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && errno == ECONNABORTED) {
			malformed(a, 0, "a connection was refused: the launcher is out of file descriptors");
			continue;
		}
		if (fd < 0)
			return;
		struct client c = { .fd = fd };
		if (channel_peer(fd, &c.peer) < 0) {
			close(fd);
			continue;
		}
		/* a closed connection is a refusal to the shim: it fails closed */
		if (connections_of(a, c.peer.pid) >= APPROVE_MAX_CLIENTS_PER_PROCESS) {
			close(fd);
			malformed(a, c.peer.pid, "a connection was refused: this process holds "
				  STR(APPROVE_MAX_CLIENTS_PER_PROCESS) " already (the bound per process)");
			continue;
		}
		if (a->nclients >= APPROVE_MAX_CLIENTS && !make_room(a, c.peer.pid)) {
			close(fd);
			malformed(a, c.peer.pid, "a connection was refused: " STR(APPROVE_MAX_CLIENTS)
				  " are open already (the bound per session)");
			continue;
		}
		if (watch(a, fd) < 0) {
			close(fd);
			continue;
		}
		a->clients = grow_or_die(a->clients, &a->clients_cap, a->nclients + 1, sizeof *a->clients);
		a->clients[a->nclients++] = c;
	}
}

/* ---- the public part --------------------------------------------------------------------- */

struct approvals *approve_new(int listen_fd, const struct approve_options *opt, char *err,
			      size_t errlen)
{
	struct approvals *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->opt = *opt;
	a->listen_fd = listen_fd;
	a->prompt = (struct prompt){ .tty = -1, .pty = -1, .ep = -1 };
	a->ep = epoll_create1(EPOLL_CLOEXEC);
	a->bad_flood = flood_new(bad_summary, a);
	a->ask_flood = flood_new(ask_summary, a);
	(void)accept_reserve(); /* a shim's connection past the fd limit is refused, not left queued */
	if (a->ep < 0 || !a->bad_flood || !a->ask_flood || watch(a, listen_fd) < 0) {
		snprintf(err, errlen, "cannot watch the approval socket: %s", strerror(errno));
		approve_free(a);
		return NULL;
	}
	if (opt->mode == APPROVE_PROMPT)
		prompt_open(&a->prompt, a->ep, opt->pty);
	return a;
}

int approve_fd(const struct approvals *a)
{
	return a->ep;
}

int approve_timeout_ms(const struct approvals *a)
{
	if (a->nqueue == 0)
		return -1;
	/* the oldest waits longest: asks are queued in arrival order */
	long long left = a->queue[0].since_ms + (long long)a->opt.ask_timeout * 1000 - now_ms();
	return left < 0 ? 0 : left > 86400000 ? 86400000 : (int)left;
}

static void expire(struct approvals *a)
{
	long long limit = now_ms() - (long long)a->opt.ask_timeout * 1000;
	bool any = false;
	while (a->nqueue && a->queue[0].since_ms <= limit) {
		resolve(a, 0, POLICY_DENY, CHANNEL_BY_TIMEOUT);
		any = true;
	}
	if (any)
		prompt_say(&a->prompt, "\r\nairlock: no answer within %u s: denied\r\n",
			   a->opt.ask_timeout);
	show_prompt(a);
}

int approve_dispatch(struct approvals *a)
{
	struct epoll_event evs[64];
	int n = epoll_wait(a->ep, evs, 64, 0);
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;
		if (fd == a->listen_fd) {
			accept_all(a);
		} else if (fd == a->prompt.tty) {
			read_tty(a);
		} else if (fd == a->prompt.pty && a->prompt.pty >= 0) {
			prompt_relay(&a->prompt);
		} else {
			for (size_t k = 0; k < a->nclients; k++)
				if (a->clients[k].fd == fd) {
					if (!serve_client(a, k))
						drop_client(a, k);
					break;
				}
		}
	}
	expire(a);
	prompt_relay_interest(&a->prompt);
	flood_tick(a->bad_flood, now_ms());
	flood_tick(a->ask_flood, now_ms());
	return n > 0 ? n : 0;
}

void approve_counts(const struct approvals *a, struct approve_counts *out)
{
	*out = a->counts;
	out->pending = a->nqueue;
}

void approve_end(struct approvals *a)
{
	if (a && a->prompt.shown)
		prompt_say(&a->prompt, "(the session ended: denied)\r\n");
	while (a && a->nqueue)
		resolve(a, 0, POLICY_DENY, CHANNEL_BY_DEFAULT);
	if (a) { /* what the bounds held back is said before the session's end, not after */
		flood_flush(a->bad_flood);
		flood_flush(a->ask_flood);
	}
}

void approve_free(struct approvals *a)
{
	if (!a)
		return;
	approve_end(a);
	flood_free(a->bad_flood);
	flood_free(a->ask_flood);
	for (size_t i = 0; i < a->nclients; i++)
		close(a->clients[i].fd);
	for (size_t i = 0; i < a->nmem; i++)
		free(a->mem[i].key);
	for (size_t i = 0; i < RECENT; i++)
		free(a->recent[i].key);
	prompt_close(&a->prompt);
	if (a->ep >= 0)
		close(a->ep);
	free(a->clients);
	free(a->queue);
	free(a->mem);
	free(a);
}
