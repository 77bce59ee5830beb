/*
 * hub_fixture.h — a session's approval side as `airlock run` wires it (launcher/approvals/hub.h),
 * for the unit tests of the control socket and the channel server: a real audit log in a
 * scratch directory whose tap feeds a control socket listening there, and a channel listener
 * beside it.  The channel server itself is made by each test (hub_fixture_start), with the
 * options it is about.
 */
#ifndef AIRLOCK_TEST_HUB_FIXTURE_H
#define AIRLOCK_TEST_HUB_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/channel.h"
#include "launcher/approvals/approve.h"
#include "launcher/approvals/control.h"
#include "launcher/approvals/hub.h"
#include "launcher/log/audit.h"

struct hub_fixture {
	char dir[64];
	char log_path[PATH_MAX];
	char sock_path[PATH_MAX];
	char chan_path[PATH_MAX];
	struct audit_log *log;
	struct hub hub;
	struct control *control;
	struct approvals *approvals; /* NULL until hub_fixture_start() */
	int listen_fd;               /* the channel's listener */
};

/* Makes the scratch directory /tmp/airlock-test-NAME.XXXXXX, the log, the hub and the sockets. */
static inline void hub_fixture_open(struct hub_fixture *h, const char *name, const char *agent)
{
	char err[512];
	snprintf(h->dir, sizeof h->dir, "/tmp/airlock-test-%s.XXXXXX", name);
	assert_non_null(mkdtemp(h->dir));
	snprintf(h->log_path, sizeof h->log_path, "%s/audit.jsonl", h->dir);
	snprintf(h->sock_path, sizeof h->sock_path, "%s/s.control", h->dir);
	snprintf(h->chan_path, sizeof h->chan_path, "%s/channel", h->dir);
	h->log = audit_open(h->log_path, "0123456789abcdef", err, sizeof err);
	assert_non_null(h->log);
	assert_int_equal(hub_init(&h->hub, h->log), 0);
	struct control_info info = { "0123456789abcdef", agent, h->log_path, 60, true };
	h->control = control_new(h->sock_path, &info, &hub_control_ops, &h->hub, err, sizeof err);
	assert_non_null(h->control);
	hub_set_control(&h->hub, h->control);
	h->listen_fd = channel_listen(h->chan_path);
	assert_true(h->listen_fd >= 0);
}

/* The channel server with the options *ao (its log and control are the fixture's). */
static inline void hub_fixture_start(struct hub_fixture *h, struct approve_options ao)
{
	char err[512];
	ao.log = h->log;
	ao.control = h->control;
	h->approvals = approve_new(h->listen_fd, &ao, err, sizeof err);
	assert_non_null(h->approvals);
	h->hub.approvals = h->approvals;
}

/* One round of the launcher's loop. */
static inline void hub_fixture_round(struct hub_fixture *h)
{
	control_dispatch(h->control);
	if (h->approvals)
		approve_dispatch(h->approvals);
	hub_tick(&h->hub);
}

/* n rounds, 2 ms apart. */
static inline void hub_fixture_rounds(struct hub_fixture *h, int n)
{
	for (int i = 0; i < n; i++) {
		hub_fixture_round(h);
		usleep(2000);
	}
}

/* Frees everything and removes the scratch directory. */
static inline void hub_fixture_close(struct hub_fixture *h)
{
	approve_free(h->approvals);
	hub_release(&h->hub);
	control_free(h->control);
	audit_close(h->log);
	close(h->listen_fd);
	unlink(h->chan_path);
	unlink(h->log_path);
	unlink(h->sock_path);
	rmdir(h->dir);
}

#endif
