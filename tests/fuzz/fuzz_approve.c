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

#include "core/channel.h"
#include "fuzz_hub.h"
#include "policy/policy.h"

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

/*
 * The channel's listener, made at the first call in a scratch directory and kept for the whole
 * run (binding a file per input is slow); *path: its path.  Aborts when it cannot be made.
 */
static int listener(const char **path)
{
	static char dir[64], sock[96];
	static int lfd = -1;
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/airlock-fuzz-approve.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(sock, sizeof sock, "%s/channel", dir);
		lfd = channel_listen(sock);
	}
	if (lfd < 0)
		abort();
	*path = sock;
	return lfd;
}

/* Sends each record as a datagram, on ch[0] and ch[1] in turn, a round of the loop after each. */
static void send_records(struct fuzz_hub *f, int ctl[2], const int ch[2], const uint8_t *data,
			 size_t size, uint8_t flags)
{
	char sink[65536];
	size_t off = 0;
	for (int k = 0; off + 2 <= size; k++) {
		size_t n = (size_t)data[off] | (size_t)data[off + 1] << 8;
		off += 2;
		if (n > size - off)
			n = size - off;
		int fd = ch[k & 1];
		if (fd >= 0)
			(void)send(fd, data + off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		off += n;
		fuzz_hub_round(f);
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;
	int lfd;
	struct fuzz_hub f;
	signal(SIGPIPE, SIG_IGN);
	lfd = listener(&path);
	if (fuzz_hub_open(&f, lfd, image()) != 0)
		abort();
	uint8_t flags = size ? data[0] : 0;
	int ctl[2] = { -1, -1 };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == 0 &&
	    control_adopt(f.control, ctl[0], true) != 0)
		ctl[1] = -1;
	if ((flags & 1) && ctl[1] >= 0) { /* the human's client is gone before anything happens */
		close(ctl[1]);
		ctl[1] = -1;
	}
	int ch[2] = { channel_connect(path), channel_connect(path) };
	fuzz_hub_round(&f);
	if (size)
		send_records(&f, ctl, ch, data + 1, size - 1, flags);
	if (ctl[1] >= 0 && (flags & 4)) /* answers the first ask, allow, and leaves at once */
		(void)!write(ctl[1], "{\"type\":\"answer\",\"id\":1,\"answer\":\"allow\"}\n", 42);
	for (int j = 0; j < 2; j++)
		if (ch[j] >= 0 && (flags & (8 << j)))
			close(ch[j]), ch[j] = -1; /* the asking process goes away */
	if (ctl[1] >= 0)
		close(ctl[1]);
	fuzz_hub_round(&f);
	fuzz_hub_round(&f);
	for (int j = 0; j < 2; j++)
		if (ch[j] >= 0)
			close(ch[j]);
	fuzz_hub_close(&f);
	return 0;
}
