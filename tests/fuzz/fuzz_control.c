/* fuzz_control.c — libFuzzer target: bytes a control client sends (launcher/control.h) reach the launcher's parser. */
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/control.h"

static unsigned answers, quits, malformed;

static void on_answer(void *ctx, uint64_t id, enum control_answer a)
{
	(void)ctx;
	(void)id;
	answers += (unsigned)a + 1;
}

static void on_quit(void *ctx)
{
	(void)ctx;
	quits++;
}

static void on_malformed(void *ctx, pid_t peer, const char *why)
{
	(void)ctx;
	(void)peer;
	malformed += why != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct control_info info = { "0123456789abcdef", "agent", "/dev/null", 60, true };
	static const struct control_ops ops = { .answer = on_answer, .quit = on_quit,
						.malformed = on_malformed };
	char err[256], sink[65536];
	int sv[2];
	struct control *c = control_new(NULL, &info, &ops, NULL, err, sizeof err);
	if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		control_free(c);
		return 0;
	}
	if (control_adopt(c, sv[0], size & 1) == 0) {
		control_ask(c, 1, 1, "who", "write /x", "p.yaml:3", "why", 1000);
		const uint8_t *p = data;
		size_t left = size;
		while (left) {
			size_t n = left > 4096 ? 4096 : left;
			if (write(sv[1], p, n) < 0)
				break;
			p += n;
			left -= n;
			control_dispatch(c);
			while (recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0)
				;
		}
		(void)!write(sv[1], "\n", 1);
		control_dispatch(c);
		control_answered(c, 1, "allow", "human");
	}
	close(sv[1]);
	control_dispatch(c);
	control_free(c);
	return 0;
}
