/* fuzz_policy_image.c — libFuzzer target: corrupt policy images must be refused or decided safely, never crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/image_format.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base_policy[] =
	"version: 1\n"
	"default: {exec: ask, read: allow, write: ask, connect: deny}\n"
	"deny:\n"
	"  - command: rm\n    args: \"-rf *\"\n    reason: dangerous\n"
	"  - command: \"/usr/bin/git\"\n    args: \"push.*--force.*\"\n    match: regex\n"
	"  - file: {path: \"*.env\", action: read}\n"
	"  - file: {path: \"~/.ssh/**\"}\n"
	"  - network: {destination: \"169.254.0.0/16\"}\n"
	"ask:\n"
	"  - command: \"py*\"\n"
	"  - file: {path: \"./src/*.c\", action: [write, exec]}\n"
	"  - network: {destination: \"*.example.com:443\"}\n"
	"  - network: {destination: \"[2001:db8::]/32\"}\n"
	"allow:\n"
	"  - command: git\n    args: status\n    match: prefix\n"
	"  - file: {path: \"/tmp/**\"}\n"
	"  - file: {path: \"/etc/hosts\", action: read}\n    match: exact\n"
	"  - file: {path: \"^/var/log/.*\\\\.log$\", action: read}\n    match: regex\n"
	"  - network: {destination: \"api.anthropic.com:443\"}\n"
	"  - network: {destination: \"*:80\"}\n"
	"  - network: {destination: \"api-?.example.org\"}\n";

static uint64_t *base;
static size_t base_size;

static void init_base(void)
{
	struct policy_error err;
	struct policy *p = policy_load_buffer("base.yaml", base_policy, sizeof base_policy - 1, &err);
	struct policy_context ctx = { "/home/u", "/work/ws" };
	void *img;
	if (!p || policy_compile(p, &ctx, &img, &base_size, &err) != 0)
		abort();
	base = img;
	policy_free(p);
}

/*
 * Input: a mode byte, then either a raw image ('R') or patches of 5 bytes
 * (32-bit offset, one byte to XOR) applied to a valid image, whose size and
 * checksum are then fixed up so validation goes past the header.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base)
		init_base();
	if (size < 1)
		return 0;
	size_t n;
	uint64_t *buf;
	if (data[0] == 'R') {
		n = size - 1;
		buf = malloc(n + 8);
		memcpy(buf, data + 1, n);
	} else {
		n = base_size;
		buf = malloc(n);
		memcpy(buf, base, n);
		for (size_t i = 1; i + 5 <= size; i += 5) {
			uint32_t off;
			memcpy(&off, data + i, 4);
			((uint8_t *)buf)[off % n] ^= data[i + 4];
		}
		if (data[0] & 1)
			n = (n - (data[0] >> 1) * 8) % (n + 1) & ~(size_t)7;
		if (n >= sizeof(struct pimg_header)) {
			struct pimg_header *h = (struct pimg_header *)buf;
			size_t hs = (sizeof *h + 7) & ~(size_t)7;
			h->size = (uint32_t)n;
			h->checksum = pimg_checksum((char *)buf + hs, n - hs);
		}
	}
	const struct policy_image *img;
	char msg[256];
	if (policy_image_open(buf, n, &img, msg, sizeof msg) == 0)
		fuzz_decide_all(img);
	free(buf);
	return 0;
}
