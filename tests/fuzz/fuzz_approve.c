/*
 * fuzz_approve.c — libFuzzer target: datagrams a process inside the sandbox sends on the
 * approval channel (core/channel.h) reach the launcher's channel server (launcher/approvals/approve.c)
 * wired as `airlock run` wires it (launcher/approvals/hub.h): the default policy's image re-deciding
 * each report, a real audit log whose tap broadcasts to an attached control client, which
 * the first input byte may close early (so a broadcast from inside the server's callbacks
 * finds it gone), and asks that wait for that client.
 *
 * Input: byte 0 = flags; then records of [2-byte little-endian length][bytes], each sent as
 * one datagram on one of two channel connections.
 */
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
#include "policy/policy.h"
#include "core/channel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct policy_image *image(void)
{
	static void *blob;
	static const struct policy_image *img;
	if (img)
		return img;
	size_t len, sz;
	struct policy_error perr;
	struct policy_context ctx = { "/home/u", "/work/ws" };
	const char *text = policy_default_text(&len);
	struct policy *p = policy_load_buffer("<default>", text, len, &perr);
	char msg[256];
	if (!p || policy_compile(p, &ctx, &blob, &sz, &perr) != 0 ||
	    policy_image_open(blob, sz, &img, msg, sizeof msg) != 0)
		abort();
	policy_free(p);
	return img;
}

static void dispatch(struct control *c, struct approvals *a, struct hub *h)
{
	control_dispatch(c);
	approve_dispatch(a);
	hub_tick(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct control_info info = { "0123456789abcdef", "agent", "/dev/null", 60, true };
	static char dir[64], path[96];
	static int lfd = -1; /* one listener for the whole run: binding a file per input is slow */
	char err[256], sink[65536];
	struct hub hub;
	signal(SIGPIPE, SIG_IGN);
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/airlock-fuzz-approve.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof path, "%s/channel", dir);
		lfd = channel_listen(path);
	}
	struct audit_log *log = audit_open("/dev/null", "0123456789abcdef", err, sizeof err);
	if (lfd < 0 || !log || hub_init(&hub, log) != 0)
		abort();
	struct control *c = control_new(NULL, &info, &hub_control_ops, &hub, err, sizeof err);
	struct approve_options ao = { .mode = APPROVE_HEADLESS, .ask_timeout = 60, .img = image(),
				      .log = log, .control = c, .pty = -1 };
	struct approvals *a = c ? approve_new(lfd, &ao, err, sizeof err) : NULL;
	if (!a)
		abort();
	hub_set_control(&hub, c);
	hub.approvals = a;
	uint8_t flags = size ? data[0] : 0;
	int ctl[2] = { -1, -1 };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == 0 &&
	    control_adopt(c, ctl[0], true) != 0)
		ctl[1] = -1;
	if ((flags & 1) && ctl[1] >= 0) { /* the human's client is gone before anything happens */
		close(ctl[1]);
		ctl[1] = -1;
	}
	int ch[2] = { channel_connect(path), channel_connect(path) };
	dispatch(c, a, &hub);
	size_t off = size ? 1 : 0;
	for (int k = 0; off + 2 <= size; k++) {
		size_t n = (size_t)data[off] | (size_t)data[off + 1] << 8;
		off += 2;
		if (n > size - off)
			n = size - off;
		int fd = ch[k & 1];
		if (fd >= 0)
			(void)send(fd, data + off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		off += n;
		dispatch(c, a, &hub);
		if (ctl[1] >= 0 && (flags & 2) && k == 3) { /* leaves mid-way, asks waiting */
			close(ctl[1]);
			ctl[1] = -1;
		}
		while (ctl[1] >= 0 && recv(ctl[1], sink, sizeof sink, MSG_DONTWAIT) > 0)
			;
		for (int j = 0; j < 2; j++) /* answers the asks got */
			while (ch[j] >= 0 && recv(ch[j], sink, sizeof sink, MSG_DONTWAIT) > 0)
				;
	}
	if (ctl[1] >= 0 && (flags & 4)) /* answers the first ask, allow, and leaves at once */
		(void)!write(ctl[1], "{\"type\":\"answer\",\"id\":1,\"answer\":\"allow\"}\n", 42);
	for (int j = 0; j < 2; j++)
		if (ch[j] >= 0 && (flags & (8 << j)))
			close(ch[j]), ch[j] = -1; /* the asking process goes away */
	if (ctl[1] >= 0)
		close(ctl[1]);
	dispatch(c, a, &hub);
	dispatch(c, a, &hub);
	for (int j = 0; j < 2; j++)
		if (ch[j] >= 0)
			close(ch[j]);
	approve_free(a);
	hub_release(&hub);
	control_free(c);
	audit_close(log);
	return 0;
}
