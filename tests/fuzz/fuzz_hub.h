/*
 * fuzz_hub.h — a session's approval side as `airlock run` wires it (launcher/approvals/hub.h),
 * for fuzz_control.c and fuzz_approve.c: an audit log to /dev/null whose tap broadcasts to
 * the control socket's clients, the control socket (clients adopted, no path) and the channel
 * server on a listener the target gives.
 */
#ifndef AIRLOCK_FUZZ_HUB_H
#define AIRLOCK_FUZZ_HUB_H

#include <string.h>

#include "launcher/approvals/approve.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/hub.h"
#include "launcher/log/audit.h"
#include "policy/policy.h"

struct fuzz_hub {
	struct audit_log *log;       /* owned */
	struct hub hub;
	struct control *control;     /* owned */
	struct approvals *approvals; /* owned */
};

/* Frees what fuzz_hub_open() made. */
static inline void fuzz_hub_close(struct fuzz_hub *f)
{
	approve_free(f->approvals);
	hub_release(&f->hub);
	control_free(f->control);
	audit_close(f->log);
}

/*
 * Makes the log, the hub, the control socket and the channel server (headless, asks time out
 * after 60 s) on listen_fd (borrowed), re-deciding reports on img (NULL: none).  Returns 0,
 * or -1 with whatever was made freed.
 */
static inline int fuzz_hub_open(struct fuzz_hub *f, int listen_fd, const struct policy_image *img)
{
	static const struct control_info info = { "0123456789abcdef", "agent", "/dev/null", 60, true };
	char err[256];

	memset(f, 0, sizeof *f);
	/* the log goes nowhere, but through audit.c: its tap is what broadcasts */
	f->log = audit_open("/dev/null", "0123456789abcdef", err, sizeof err);
	if (!f->log || hub_init(&f->hub, f->log) != 0) {
		audit_close(f->log);
		return -1;
	}
	f->control = control_new(NULL, &info, &hub_control_ops, &f->hub, err, sizeof err);
	struct approve_options ao = { .mode = APPROVE_HEADLESS, .ask_timeout = 60, .img = img,
				      .log = f->log, .control = f->control, .pty = -1 };
	f->approvals = f->control ? approve_new(listen_fd, &ao, err, sizeof err) : NULL;
	if (!f->approvals) {
		fuzz_hub_close(f);
		return -1;
	}
	hub_set_control(&f->hub, f->control);
	f->hub.approvals = f->approvals;
	return 0;
}

/* One round of the launcher's loop: the control socket, the channel server, the flood bound. */
static inline void fuzz_hub_round(struct fuzz_hub *f)
{
	control_dispatch(f->control);
	approve_dispatch(f->approvals);
	hub_tick(&f->hub);
}

#endif
