/* testutil.h — helpers shared by the cmocka unit tests: compile a YAML policy into an image in one call, copy bytes to an exact-size buffer. */
#ifndef AIRLOCK_TESTUTIL_H
#define AIRLOCK_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

/* The home and workspace every test compiles against. */
#define TEST_HOME "/home/u"
#define TEST_WORKSPACE "/work/ws"

/* A compiled policy: the parsed form, the image blob and its validated view. */
struct test_policy {
	struct policy *p;               /* owned */
	void *blob;                     /* owned */
	size_t size;
	const struct policy_image *img; /* points into blob */
};

/*
 * Loads, compiles and opens yaml (NUL-terminated) against TEST_HOME and
 * TEST_WORKSPACE; fails the current test with the error text on any error.
 */
static inline void test_policy_build(struct test_policy *t, const char *yaml)
{
	struct policy_error err;
	char msg[2048];
	struct policy_context ctx = { TEST_HOME, TEST_WORKSPACE };
	memset(t, 0, sizeof *t);
	t->p = policy_load_buffer("test.yaml", yaml, strlen(yaml), &err);
	if (!t->p) {
		policy_error_format(&err, msg, sizeof msg);
		fail_msg("load: %s", msg);
	}
	if (policy_compile(t->p, &ctx, &t->blob, &t->size, &err) != 0) {
		policy_error_format(&err, msg, sizeof msg);
		fail_msg("compile: %s", msg);
	}
	if (policy_image_open(t->blob, t->size, &t->img, msg, sizeof msg) != 0)
		fail_msg("image: %s", msg);
}

/* Frees what test_policy_build() made.  Accepts a zeroed struct. */
static inline void test_policy_free(struct test_policy *t)
{
	free(t->blob);
	policy_free(t->p);
	memset(t, 0, sizeof *t);
}

/* Copies len bytes into a new buffer of exactly len bytes (the caller frees it), so ASan sees any read past the end. */
static inline void *exact_copy(const void *p, size_t len)
{
	void *b = malloc(len ? len : 1);
	assert_non_null(b);
	if (len)
		memcpy(b, p, len);
	return b;
}

#endif
