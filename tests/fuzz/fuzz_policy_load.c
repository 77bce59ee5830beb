/* fuzz_policy_load.c — libFuzzer target: YAML policy text through load, compile, image open and decisions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_error err;
	char msg[2048];
	struct policy *p = policy_load_buffer("fuzz.yaml", (const char *)data, size, &err);
	if (!p) {
		policy_error_format(&err, msg, sizeof msg);
		return 0;
	}
	struct policy_context ctx = { "/home/u", "/work/ws" };
	void *image;
	size_t isize;
	if (policy_compile(p, &ctx, &image, &isize, &err) == 0) {
		const struct policy_image *img;
		/* whatever the loader accepts, the compiler must turn into a valid image */
		if (policy_image_open(image, isize, &img, msg, sizeof msg) != 0) {
			fprintf(stderr, "compiled image refused: %s\n", msg);
			abort();
		}
		fuzz_decide_all(img);
		free(image);
	}
	policy_free(p);
	return 0;
}
