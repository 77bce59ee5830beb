/* fuzz_common.h — decisions every fuzz target runs against an image it managed to open. */
#ifndef AIRLOCK_FUZZ_COMMON_H
#define AIRLOCK_FUZZ_COMMON_H

#include "policy/policy.h"

/* Exercises every decision entry point and rule description on img. */
static inline void fuzz_decide_all(const struct policy_image *img)
{
	static const char *const paths[] = { "/", "/home/u/.ssh/id_rsa", "/work/ws/.env",
					     "/work/ws/src/a.c", "/tmp/x.pem", "/a/b/c/d/e/f.tar.gz" };
	static const char *const hosts[] = { "api.anthropic.com", "a.b.example.com", "10.1.2.3",
					     "::1", "[2001:db8::1]", "2130706433", "x." };
	const char *argv[] = { "git", "push", "--force", "origin", NULL };
	struct policy_rule_info info;
	volatile unsigned sink = 0;
	for (unsigned i = 0; i < sizeof paths / sizeof paths[0]; i++)
		for (unsigned a = POLICY_FILE_READ; a <= POLICY_FILE_EXEC; a <<= 1)
			sink += policy_decide_open(img, paths[i], a).decision;
	for (unsigned i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
		sink += policy_decide_connect(img, hosts[i], 443).decision;
	sink += policy_decide_exec(img, "/usr/bin/git", argv).decision;
	sink += policy_decide_exec(img, "rm", NULL).decision;
	for (int32_t r = -1; r < (int32_t)policy_image_rule_count(img) && r < 64; r++)
		if (policy_rule_describe(img, r, &info) == 0)
			sink += info.line;
	(void)sink;
}

#endif
