/* test_flood.c — the bound on logged bad input (launcher/approvals/flood.h): bursts, windows, summaries, many peers, the global bound. */
#include "testutil.h"

#include "launcher/approvals/flood.h"

struct said {
	pid_t peer[1024];
	unsigned long n[1024];
	size_t count;
};

static void summary(void *arg, pid_t peer, unsigned long n)
{
	struct said *s = arg;
	assert_true(n > 0);
	assert_true(s->count < 1024);
	s->peer[s->count] = peer;
	s->n[s->count++] = n;
}

static unsigned admitted(struct flood *f, pid_t peer, long long now, unsigned tries)
{
	unsigned n = 0;
	for (unsigned i = 0; i < tries; i++)
		n += flood_admit(f, peer, now);
	return n;
}

/* FLOOD_BURST a window; the rest counted and said once the window is over, or before the next logged one. */
static void test_burst_then_summary(void **state)
{
	struct said s = { 0 };
	struct flood *f = flood_new(summary, &s);
	(void)state;
	assert_int_equal(admitted(f, 7, 1000, 500), FLOOD_BURST);
	assert_int_equal(s.count, 0);
	flood_tick(f, 1000 + FLOOD_WINDOW_MS - 1); /* the window is not over */
	assert_int_equal(s.count, 0);
	flood_tick(f, 1000 + FLOOD_WINDOW_MS);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.peer[0], 7);
	assert_int_equal(s.n[0], 500 - FLOOD_BURST);
	/* the summary counted as the new window's first line */
	assert_int_equal(admitted(f, 7, 1000 + FLOOD_WINDOW_MS, 100), FLOOD_BURST - 1);
	/* next window: the held count is said before the first logged event */
	assert_true(flood_admit(f, 7, 1000 + 2 * FLOOD_WINDOW_MS));
	assert_int_equal(s.count, 2);
	assert_int_equal(s.n[1], 100 - (FLOOD_BURST - 1));
	flood_free(f);
	assert_int_equal(s.count, 2); /* nothing left to say */
}

/* Peers have their own bursts; flood_free says what each still holds. */
static void test_peers_apart(void **state)
{
	struct said s = { 0 };
	struct flood *f = flood_new(summary, &s);
	(void)state;
	assert_int_equal(admitted(f, 1, 0, 20), FLOOD_BURST);
	assert_int_equal(admitted(f, 2, 0, 3), 3);
	assert_int_equal(admitted(f, 2, 0, 20), FLOOD_BURST - 3);
	flood_flush(f);
	assert_int_equal(s.count, 2);
	unsigned long total = s.n[0] + s.n[1];
	assert_int_equal(total, (20 - FLOOD_BURST) + (23 - FLOOD_BURST));
	flood_free(f);
	assert_int_equal(s.count, 2);
}

/* All peers together are bounded too: many peers cannot each log a burst. */
static void test_total_bound(void **state)
{
	struct said s = { 0 };
	struct flood *f = flood_new(summary, &s);
	unsigned logged = 0;
	(void)state;
	for (pid_t p = 1; p <= 50; p++)
		logged += admitted(f, p, 0, 5);
	assert_int_equal(logged, FLOOD_TOTAL_BURST);
	flood_free(f);
	unsigned long held = 0;
	for (size_t i = 0; i < s.count; i++)
		held += s.n[i];
	assert_int_equal(held, 250 - FLOOD_TOTAL_BURST);
}

/*
 * Thousands of short-lived peers (a fork loop sending garbage) make one
 * summary line a window between them (pid 0), not one line each.
 */
static void test_many_peers_one_summary(void **state)
{
	struct said s = { 0 };
	struct flood *f = flood_new(summary, &s);
	unsigned long held_expected = 0;
	(void)state;
	for (pid_t p = 1; p <= 5000; p++) {
		long long now = p / 100; /* all within one window */
		held_expected += 30 - admitted(f, p, now, 30);
	}
	size_t before = s.count;
	assert_true(before <= 1); /* evicted peers' counts are pooled */
	flood_tick(f, FLOOD_WINDOW_MS + 100);
	flood_free(f);
	unsigned long held = 0;
	size_t zero = 0;
	for (size_t i = 0; i < s.count; i++) {
		held += s.n[i];
		zero += s.peer[i] == 0;
	}
	assert_int_equal(held, held_expected);
	assert_true(zero >= 1);
	assert_true(s.count <= FLOOD_PEERS + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_summary),
		cmocka_unit_test(test_peers_apart),
		cmocka_unit_test(test_total_bound),
		cmocka_unit_test(test_many_peers_one_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
