/* approve.h — the channel server: logs the shims' events, queues their asks and answers them (human, session memory, headless rule, timeout). */
#ifndef AIRLOCK_APPROVALS_APPROVE_H
#define AIRLOCK_APPROVALS_APPROVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "policy/policy.h"

enum approve_mode {
	APPROVE_HEADLESS = 0, /* asks answered at once: deny, or allow with default_allow */
	APPROVE_PROMPT = 1,   /* asks shown on /dev/tty, answered y / n / a / b */
};

struct control;
struct audit_log;

/*
 * Bounds on what the agent can make the launcher hold.  An ask past one is
 * refused at once (deny, decided_by default, logged with why); a connection
 * past APPROVE_MAX_CLIENTS is closed at once, which the shim takes as a
 * refusal.  A real agent waits on one ask per thread; these are far above it.
 */
#define APPROVE_MAX_CLIENTS 1024          /* shim connections at once; when full, the process
					     holding the most gives one up to a newcomer */
#define APPROVE_MAX_CLIENTS_PER_PROCESS 64 /* shim connections at once, from one process */
#define APPROVE_MAX_ASKS 256              /* asks waiting at once, in the session */
#define APPROVE_MAX_ASKS_PER_PROCESS 16   /* asks waiting at once, from one process */
#define APPROVE_MAX_ASK_BYTES (4u << 20)  /* bytes of the waiting asks' messages */

struct approve_options {
	enum approve_mode mode;
	bool default_allow;             /* headless: allow asks instead of denying them */
	unsigned ask_timeout;           /* seconds an ask may wait before it is denied */
	const struct policy_image *img; /* describes rules for the log and the prompt */
	struct audit_log *log;          /* borrowed */
	struct control *control;        /* borrowed, or NULL: asks are shown to its attached
					   clients, and wait for them while one is attached */
	int pty;                        /* APPROVE_PROMPT: the master side of the agent's terminal
					   (borrowed), relayed to and from /dev/tty around the
					   prompts; -1: the agent shares the terminal */
};

struct approvals;

/*
 * Serves the channel listening on listen_fd (borrowed): accepts shims,
 * logs their events, queues their asks and answers them per opt.
 * Returns NULL with a message in err.
 */
struct approvals *approve_new(int listen_fd, const struct approve_options *opt, char *err,
			      size_t errlen);

/* An fd that is readable when approve_dispatch() has work (for poll(2)). */
int approve_fd(const struct approvals *a);

/* Milliseconds until the oldest ask times out, or -1 when none waits. */
int approve_timeout_ms(const struct approvals *a);

/*
 * Does the work pending now without blocking: new shims, messages, answers,
 * timeouts.  Returns how many sources had work (0: nothing was pending).
 */
int approve_dispatch(struct approvals *a);

/* Told the answer to an ask made with approve_ask_connect(): allow or deny, and who decided. */
typedef void (*approve_done_fn)(void *arg, enum policy_decision d, const char *decided_by);

/*
 * Queues an ask made in the launcher itself — the proxy's, for a connection
 * to host:port it holds while waiting — under the same prompt, session
 * memory, headless rule and ask_timeout as a shim's.  done(arg, ...) is
 * called exactly once (by approve_dispatch(), or with deny by
 * approve_free()); possibly before this returns, when memory or the headless
 * rule answers at once.  The caller logs the outcome.  0 or -errno.
 */
int approve_ask_connect(struct approvals *a, const char *host, unsigned port, int32_t rule,
			approve_done_fn done, void *arg);

/*
 * Answers the waiting ask id (control.h's ids) with d, decided by a human;
 * remember_it: the same request gets d for the rest of the session (the
 * TUI's A and B).  0, or -ENOENT when no ask id waits (already answered).
 */
int approve_answer(struct approvals *a, uint64_t id, enum policy_decision d, bool remember_it);

/*
 * The number of clients attached to the control socket changed: when
 * nobody is left to answer (no client, no prompt), every waiting ask takes
 * the headless rule at once.
 */
void approve_attached(struct approvals *a);

/*
 * APPROVE_PROMPT with a pty: copies what the agent wrote and the relay has
 * not shown yet to the terminal (the agent ended).  No-op otherwise.
 */
void approve_drain_agent(struct approvals *a);

/*
 * Answers every waiting ask with deny, decided by default (the session is
 * ending), and logs them, then the summaries of what the flood bounds held
 * back (flood.h).  Accepts NULL.
 */
void approve_end(struct approvals *a);

/* approve_end(), then frees everything.  Accepts NULL. */
void approve_free(struct approvals *a);

/* Counts of decisions logged so far, for the end-of-session summary. */
struct approve_counts {
	unsigned long allow, deny, asked;
	unsigned long pending; /* asks waiting now */
};
void approve_counts(const struct approvals *a, struct approve_counts *out);

#endif
