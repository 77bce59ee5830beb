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

#include "fuzz_hub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CLIENTS 3

static void done(void *arg, enum policy_decision d, const char *by)
{
	(void)arg;
	(void)d;
	(void)by;
}

/* Connects the clients (the first one the human's); sv[i][1] is client i's end, -1 if none. */
static void connect_clients(struct control *c, int sv[CLIENTS][2])
{
	for (int i = 0; i < CLIENTS; i++) {
		sv[i][0] = sv[i][1] = -1;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) != 0 ||
		    control_adopt(c, sv[i][0], i == 0) != 0)
			sv[i][1] = -1;
	}
}

/* Sends data in 512-byte pieces, client after client, a round of the loop after each. */
static void send_pieces(struct fuzz_hub *f, int sv[CLIENTS][2], const uint8_t *data, size_t size,
			uint8_t mode)
{
	char sink[65536];
	for (int k = 0; size > 0; k++) {
		int i = k % CLIENTS;
		size_t n = size > 512 ? 512 : size;
		if (sv[i][1] >= 0 && write(sv[i][1], data, n) < 0) {
			close(sv[i][1]);
			sv[i][1] = -1;
		}
		data += n;
		size -= n;
		if (sv[i][1] >= 0 && (mode >> i) & 1) { /* leaves before the launcher reads */
			close(sv[i][1]);
			sv[i][1] = -1;
		}
		fuzz_hub_round(f);
		for (int j = 0; j < CLIENTS; j++)
			while (sv[j][1] >= 0 && recv(sv[j][1], sink, sizeof sink, MSG_DONTWAIT) > 0)
				;
	}
}

/* Each client still there ends its last line, some leave at once, then all leave. */
static void end_clients(struct fuzz_hub *f, int sv[CLIENTS][2], uint8_t mode)
{
	for (int i = 0; i < CLIENTS; i++)
		if (sv[i][1] >= 0) {
			(void)!write(sv[i][1], "\n", 1);
			if ((mode >> (i + 3)) & 1) {
				close(sv[i][1]); /* leaves right after its last line */
				sv[i][1] = -1;
			}
		}
	control_dispatch(f->control);
	approve_dispatch(f->approvals);
	for (int i = 0; i < CLIENTS; i++)
		if (sv[i][1] >= 0)
			close(sv[i][1]);
	control_dispatch(f->control);
	approve_dispatch(f->approvals);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[CLIENTS][2], listen_fd[2];
	struct fuzz_hub f;
	signal(SIGPIPE, SIG_IGN);
	/* one end of a socketpair stands in for the channel's listener: it never accepts */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, listen_fd) != 0)
		return 0;
	if (fuzz_hub_open(&f, listen_fd[0], NULL) == 0) {
		uint8_t mode = size ? data[0] : 0;
		connect_clients(f.control, sv);
		(void)approve_ask_connect(f.approvals, "a.example", 443, -1, done, NULL);
		(void)approve_ask_connect(f.approvals, "b.example", 443, -1, done, NULL);
		if (size)
			send_pieces(&f, sv, data + 1, size - 1, mode);
		end_clients(&f, sv, mode);
		fuzz_hub_close(&f);
	}
	close(listen_fd[0]);
	close(listen_fd[1]);
	return 0;
}
