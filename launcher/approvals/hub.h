/*
 * hub.h — how one session's parts are wired together: the audit log feeds
 * the control socket's activity stream (its tap), the control socket's
 * clients answer the approval queue's asks, and bad lines from a client are
 * logged, at most FLOOD_BURST a second per client (flood.h).
 *
 * `airlock run` wires its session with this, and so do the fuzz targets and
 * unit tests of the control socket and the channel, so that what they
 * exercise is the launcher's own wiring: a callback that logs, a log line
 * that is broadcast, a broadcast that finds a client gone.
 */
#ifndef AIRLOCK_HUB_H
#define AIRLOCK_HUB_H

#include <stdbool.h>

#include "launcher/approvals/control.h"

struct audit_log;
struct approvals;
struct flood;

struct hub {
	struct audit_log *log;       /* borrowed */
	struct control *control;     /* borrowed, NULL until made */
	struct approvals *approvals; /* borrowed, NULL until made */
	struct flood *flood;         /* owned: the bound on logged bad lines (hub_init) */
	bool quit_requested;         /* a client asked to end the agent (control.h "quit") */
};

/* The control socket's callbacks; their ctx is a struct hub *. */
extern const struct control_ops hub_control_ops;

/*
 * Starts h over log (borrowed): clears it and makes its flood limiter.
 * 0 or -ENOMEM.
 */
int hub_init(struct hub *h, struct audit_log *log);

/*
 * control (borrowed) is h's control socket from now on: every line the
 * audit log writes is also sent to its clients (audit_set_tap()).
 */
void hub_set_control(struct hub *h, struct control *control);

/* Now and then (once per loop): summaries of bad lines held back (flood_tick()). */
void hub_tick(struct hub *h);

/* Summaries of every bad line held back, now: the session is ending (before its end event). */
void hub_flush(struct hub *h);

/* Takes the tap off the log, summarises what was held back, frees the limiter.  Not h itself. */
void hub_release(struct hub *h);

#endif
