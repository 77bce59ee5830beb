/* test_grow.c — core/grow.h's grow-by-doubling: the capacities it picks, its bound, and what it leaves when it fails. */
#include "testutil.h"

#include "core/grow.h"

/* Capacities a run of appends goes through, from first, by doubling. */
static void test_doubles_from_first(void **state)
{
	static const size_t want[] = { 4, 4, 4, 4, 8, 8, 8, 8, 16 };
	int *v = NULL;
	size_t cap = 0;
	(void)state;
	for (size_t n = 0; n < sizeof want / sizeof want[0]; n++) {
		int *more = grow_array(v, &cap, n + 1, sizeof *v, 4);
		assert_non_null(more);
		v = more;
		v[n] = (int)n;
		assert_int_equal(cap, want[n]);
	}
	for (size_t n = 0; n < sizeof want / sizeof want[0]; n++)
		assert_int_equal(v[n], (int)n); /* kept across the moves */
	free(v);
}

/* A need far past the capacity doubles until it fits; first 0 starts from 1. */
static void test_jumps(void **state)
{
	char *v = NULL;
	size_t cap = 0;
	(void)state;
	v = grow_array(v, &cap, 1, 1, 0);
	assert_non_null(v);
	assert_int_equal(cap, 1);
	v = grow_array(v, &cap, 1000, 1, 0);
	assert_non_null(v);
	assert_int_equal(cap, 1024);
	char *same = grow_array(v, &cap, 1000, 1, 0); /* enough already: as it is */
	assert_ptr_equal(same, v);
	assert_int_equal(cap, 1024);
	free(v);
}

/* The bound: doubling stops at max; a need past it fails and changes nothing. */
static void test_bound(void **state)
{
	long *v = NULL;
	size_t cap = 0;
	(void)state;
	v = grow_array_max(v, &cap, 1, sizeof *v, 32, 20);
	assert_non_null(v);
	assert_int_equal(cap, 20); /* first is past max */
	assert_null(grow_array_max(v, &cap, 21, sizeof *v, 32, 20));
	assert_int_equal(cap, 20);
	free(v);
	v = NULL;
	cap = 0;
	v = grow_array_max(v, &cap, 9, sizeof *v, 8, 100);
	assert_int_equal(cap, 16);
	v = grow_array_max(v, &cap, 65, sizeof *v, 8, 100);
	assert_non_null(v);
	assert_int_equal(cap, 100); /* 128 stopped at 100 */
	v[99] = 1;
	free(v);
}

/* Sizes that overflow size_t fail, leaving the array and its capacity. */
static void test_overflow(void **state)
{
	char *v = malloc(8);
	size_t cap = 8;
	(void)state;
	assert_non_null(v);
	assert_null(grow_array(v, &cap, SIZE_MAX / 2 + 2, 2, 8));
	assert_int_equal(cap, 8);
	assert_null(grow_array(v, &cap, 9, SIZE_MAX / 4, 8));
	assert_int_equal(cap, 8);
	v[7] = 'x'; /* still the caller's */
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubles_from_first),
		cmocka_unit_test(test_jumps),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
