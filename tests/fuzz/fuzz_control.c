/*
 * fuzz_control.c — libFuzzer target: bytes control clients send (launcher/approvals/control.h) reach
 * the launcher's control socket wired as `airlock run` wires it (launcher/approvals/hub.h): a real
 * audit log whose tap broadcasts every line to the clients, the approval queue behind the
 * answers, bad lines logged through the flood bound.  The input is split among three
 * clients; the first byte says which of them close early (before the launcher reads, or
 * right after their bytes), so clients go away while a callback is logging about them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/approvals/control.h"
#include "launcher/approvals/hub.h"
#include "launcher/log/audit.h"
#include "launcher/approvals/approve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CLIENTS 3

static void done(void *arg, enum policy_decision d, const char *by)
{
	(void)arg;
	(void)d;
	(void)by;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct control_info info = { "0123456789abcdef", "agent", "/dev/null", 60, true };
	char err[256], sink[65536];
	int sv[CLIENTS][2], listen_fd[2];
	struct hub hub;
	signal(SIGPIPE, SIG_IGN);
	/* the log goes nowhere, but through audit.c: its tap is what broadcasts */
	struct audit_log *log = audit_open("/dev/null", "0123456789abcdef", err, sizeof err);
	if (!log || hub_init(&hub, log) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, listen_fd) != 0) {
		audit_close(log);
		return 0;
	}
	struct control *c = control_new(NULL, &info, &hub_control_ops, &hub, err, sizeof err);
	struct approve_options ao = { .mode = APPROVE_HEADLESS, .ask_timeout = 60, .log = log,
				      .control = c, .pty = -1 };
	/* one end of a socketpair stands in for the channel's listener: it never accepts */
	struct approvals *a = c ? approve_new(listen_fd[0], &ao, err, sizeof err) : NULL;
	if (!a)
		goto out;
	hub_set_control(&hub, c);
	hub.approvals = a;
	uint8_t mode = size ? data[0] : 0;
	for (int i = 0; i < CLIENTS; i++) {
		sv[i][0] = sv[i][1] = -1;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) != 0 ||
		    control_adopt(c, sv[i][0], i == 0) != 0)
			sv[i][1] = -1;
	}
	(void)approve_ask_connect(a, "a.example", 443, -1, done, NULL);
	(void)approve_ask_connect(a, "b.example", 443, -1, done, NULL);
	size_t off = size ? 1 : 0;
	for (int k = 0; off < size; k++) {
		int i = k % CLIENTS;
		size_t n = size - off > 512 ? 512 : size - off;
		if (sv[i][1] >= 0 && write(sv[i][1], data + off, n) < 0) {
			close(sv[i][1]);
			sv[i][1] = -1;
		}
		off += n;
		if (sv[i][1] >= 0 && (mode >> i) & 1) { /* leaves before the launcher reads */
			close(sv[i][1]);
			sv[i][1] = -1;
		}
		control_dispatch(c);
		approve_dispatch(a);
		hub_tick(&hub);
		for (int j = 0; j < CLIENTS; j++)
			while (sv[j][1] >= 0 && recv(sv[j][1], sink, sizeof sink, MSG_DONTWAIT) > 0)
				;
	}
	for (int i = 0; i < CLIENTS; i++)
		if (sv[i][1] >= 0) {
			(void)!write(sv[i][1], "\n", 1);
			if ((mode >> (i + 3)) & 1) {
				close(sv[i][1]); /* leaves right after its last line */
				sv[i][1] = -1;
			}
		}
	control_dispatch(c);
	approve_dispatch(a);
	for (int i = 0; i < CLIENTS; i++)
		if (sv[i][1] >= 0)
			close(sv[i][1]);
	control_dispatch(c);
	approve_dispatch(a);
out:
	approve_free(a);
	hub_release(&hub);
	control_free(c);
	audit_close(log);
	close(listen_fd[0]);
	close(listen_fd[1]);
	return 0;
}
