/* test_dns.c — table-driven unit tests for proxy/dns.c's answers: fake addresses, names, the pool, many names, counters. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns_wire.h"

/* ---- answers ------------------------------------------------------------------ */

static void test_a(void **state)
{
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	(void)state;
	query(&q, 0x1234, "Example.COM", 1);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.flags, 0x8000 | 0x0400 | RD | 0x0080); /* QR AA RD RA, NOERROR */
	assert_int_equal(r.qd, 1);
	assert_int_equal(r.an, 1);
	assert_int_equal(r.ar, 0);
	assert_string_equal(r.qname, "Example.COM");
	assert_string_equal(r.ans[0].name, "Example.COM");
	assert_int_equal(r.ans[0].type, 1);
	assert_int_equal(r.ans[0].cls, 1);
	assert_int_equal(r.ans[0].ttl, DNS_TTL);
	assert_int_equal(r.ans[0].rdlen, 4);
	assert_int_equal(rd32(r.ans[0].rdata), IP(198, 18, 0, 1));
	assert_int_equal(info.id, 0x1234);
	assert_int_equal(info.qtype, 1);
	assert_int_equal(info.rcode, DNS_RCODE_NOERROR);
	assert_true(info.has_addr);
	assert_int_equal(info.ipv4, IP(198, 18, 0, 1));
	assert_string_equal(info.qname, "example.com");
	assert_int_equal(info.drop, DNS_DROP_NONE);
	assert_string_equal(dns_table_name_of(t, IP(198, 18, 0, 1)), "example.com");
	dns_table_free(t);
}

static void test_aaaa_is_mapped_a(void **state)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;
	uint32_t a;

	(void)state;
	assert_int_equal(dns_table_addr_of(t, "first.example", &a), 0);
	query(&q, 7, "v6.example", 28);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.an, 1);
	assert_int_equal(r.ans[0].type, 28);
	assert_int_equal(r.ans[0].rdlen, 16);
	assert_memory_equal(r.ans[0].rdata, prefix, 12);
	assert_int_equal(rd32(r.ans[0].rdata + 12), IP(198, 18, 0, 2));
	assert_int_equal(info.ipv4, IP(198, 18, 0, 2));
	/* The A answer for the same name carries the same address. */
	query(&q, 8, "V6.example", 1);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(rd32(r.ans[0].rdata), IP(198, 18, 0, 2));
	assert_int_equal(dns_table_count(t), 2);
	dns_table_free(t);
}

/* Types other than A and AAAA: NODATA, question echoed, the table untouched. */
static void test_nodata(void **state)
{
	static const unsigned types[] = { 0, 2, 5, 6, 12, 15, 16, 33, 41, 65, 251, 252, 255, 256, 65535 };
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	(void)state;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		query(&q, (unsigned)i, "mail.example.com", types[i]);
		assert_true(ask(t, &q, out, &r, &info) > 0);
		assert_int_equal(r.flags & 0xf, DNS_RCODE_NOERROR);
		assert_int_equal(r.qd, 1);
		assert_int_equal(r.an, 0);
		assert_int_equal(r.qtype, types[i]);
		assert_int_equal(info.qtype, types[i]);
		assert_false(info.has_addr);
		assert_string_equal(info.qname, "mail.example.com");
	}
	/* The root name has no address either. */
	query(&q, 99, "", 1);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.flags & 0xf, DNS_RCODE_NOERROR);
	assert_int_equal(r.an, 0);
	assert_string_equal(info.qname, "");
	assert_int_equal(dns_table_count(t), 0);
	struct dns_stats s;
	dns_table_stats(t, &s);
	assert_int_equal(s.nodata, sizeof types / sizeof types[0] + 1);
	assert_int_equal(s.addresses, 0);
	dns_table_free(t);
}

/* Spellings of one name share an address, by wire query and by dns_table_addr_of(). */
static void test_same_name_same_address(void **state)
{
	static const char *const wire[] = { "api.example.com", "API.EXAMPLE.COM", "Api.Example.Com" };
	static const char *const text[] = { "api.example.com", "API.example.com.", "api.EXAMPLE.com" };
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;
	uint32_t first, a;

	(void)state;
	assert_int_equal(dns_table_addr_of(t, "other.example", &a), 0);
	assert_int_equal(dns_table_addr_of(t, "api.example.com", &first), 0);
	for (size_t i = 0; i < 3; i++) {
		query(&q, 1, wire[i], i % 2 ? 28 : 1);
		assert_true(ask(t, &q, out, &r, &info) > 0);
		assert_int_equal(info.ipv4, first);
		assert_int_equal(dns_table_addr_of(t, text[i], &a), 0);
		assert_int_equal(a, first);
	}
	assert_int_equal(dns_table_count(t), 2);
	assert_string_equal(dns_table_name_of(t, first), "api.example.com");
	dns_table_free(t);
}

static void test_different_names(void **state)
{
	static const char *const names[] = { "a", "b", "a.b", "b.a", "ab", "a-b", "a.b.c", "_x._tcp.a", "1.2.3.4" };
	struct dns_table *t = table(0);
	uint32_t got[9];

	(void)state;
	for (size_t i = 0; i < 9; i++) {
		assert_int_equal(dns_table_addr_of(t, names[i], &got[i]), 0);
		assert_int_equal(got[i], DNS_FAKE_NET + 1 + i);
		assert_true(dns_is_fake(got[i]));
	}
	for (size_t i = 0; i < 9; i++)
		assert_string_equal(dns_table_name_of(t, got[i]), names[i]);
	dns_table_free(t);
}

struct fake_row {
	uint32_t ip;
	bool fake;
	int line;
};

static const struct fake_row fake_rows[] = {
	{ IP(198, 18, 0, 0), false, __LINE__ },   { IP(198, 18, 0, 1), true, __LINE__ },
	{ IP(198, 18, 255, 255), true, __LINE__ }, { IP(198, 19, 0, 0), true, __LINE__ },
	{ IP(198, 19, 255, 254), true, __LINE__ }, { IP(198, 19, 255, 255), false, __LINE__ },
	{ IP(198, 17, 255, 255), false, __LINE__ }, { IP(198, 20, 0, 1), false, __LINE__ },
	{ IP(10, 18, 0, 1), false, __LINE__ },    { IP(127, 0, 0, 1), false, __LINE__ },
	{ 0, false, __LINE__ },                   { 0xffffffffu, false, __LINE__ },
};

static void test_is_fake_and_reverse(void **state)
{
	struct dns_table *t = table(0);
	uint32_t a;

	(void)state;
	for (size_t i = 0; i < sizeof fake_rows / sizeof fake_rows[0]; i++)
		if (dns_is_fake(fake_rows[i].ip) != fake_rows[i].fake)
			fail_msg("line %d: dns_is_fake(%08x)", fake_rows[i].line, fake_rows[i].ip);
	assert_int_equal(dns_table_addr_of(t, "x.example", &a), 0);
	assert_string_equal(dns_table_name_of(t, a), "x.example");
	assert_null(dns_table_name_of(t, a + 1)); /* in the pool, not given out */
	assert_null(dns_table_name_of(t, DNS_FAKE_NET));
	assert_null(dns_table_name_of(t, IP(198, 19, 255, 255)));
	assert_null(dns_table_name_of(t, IP(127, 0, 0, 1)));
	dns_table_free(t);
}

struct name_row {
	const char *name;
	int rc;
	int line;
};

#define NR(n, rc) { n, rc, __LINE__ }

static const struct name_row name_rows[] = {
	NR("example.com", 0),
	NR("example.com.", 0),
	NR("localhost", 0),
	NR("_sip._udp.example", 0),
	NR("*.example", 0),
	NR("xn--bcher-kva.example", 0),
	NR(L63 ".x", 0),
	NR(L63 "." L63 "." L63 "." L63 "a", -EINVAL), /* 64-octet last label */
	NR(L63 "." L63 "." L63 "." "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0), /* 253 */
	NR(L63 "." L63 "." L63 "." "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.", 0),
	NR(L63 "." L63 "." L63 "." "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -EINVAL), /* 254 */
	NR(L63 "a.x", -EINVAL),
	NR("", -EINVAL),
	NR(".", -EINVAL),
	NR("..", -EINVAL),
	NR("a..b", -EINVAL),
	NR(".a", -EINVAL),
	NR("a b", -EINVAL),
	NR("a\\.b", -EINVAL),
	NR("a\tb", -EINVAL),
	NR("a\x7f", -EINVAL),
	NR("b\xc3\xbc" "cher.example", -EINVAL),
};

static void test_name_rules(void **state)
{
	struct dns_table *t = table(0);
	uint32_t a;

	(void)state;
	for (size_t i = 0; i < sizeof name_rows / sizeof name_rows[0]; i++) {
		int rc = dns_table_addr_of(t, name_rows[i].name, &a);
		if (rc != name_rows[i].rc)
			fail_msg("line %d: dns_table_addr_of = %d, expected %d", name_rows[i].line, rc,
				 name_rows[i].rc);
	}
	dns_table_free(t);
}

/* Label bytes the table refuses: NXDOMAIN, with '?' in the name reported. */
static void test_refused_bytes(void **state)
{
	static const struct {
		const char *label;
		size_t len;
		const char *shown;
	} rows[] = {
		{ "a.b", 3, "a?b.example" },     { "a\0b", 3, "a?b.example" },
		{ "a b", 3, "a?b.example" },     { "\x80", 1, "?.example" },
		{ "a\\b", 3, "a?b.example" },    { "\x1b[2J", 4, "?[2j.example" },
	};
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		header(&q, 5, RD, 1, 0, 0, 0);
		put_label(&q, rows[i].label, rows[i].len);
		put_name(&q, "example");
		put16(&q, 1);
		put16(&q, 1);
		assert_true(ask(t, &q, out, &r, &info) > 0);
		assert_int_equal(r.flags & 0xf, DNS_RCODE_NXDOMAIN);
		assert_int_equal(r.an, 0);
		assert_int_equal(info.rcode, DNS_RCODE_NXDOMAIN);
		assert_string_equal(info.qname, rows[i].shown);
	}
	assert_int_equal(dns_table_count(t), 0);
	dns_table_free(t);
}

static void test_exhaustion(void **state)
{
	struct dns_table *t = table(3);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;
	uint32_t a;

	(void)state;
	assert_int_equal(dns_table_addr_of(t, "a", &a), 0);
	assert_int_equal(dns_table_addr_of(t, "b", &a), 0);
	assert_int_equal(dns_table_addr_of(t, "c", &a), 0);
	assert_int_equal(dns_table_addr_of(t, "d", &a), -ENOSPC);
	assert_int_equal(dns_table_addr_of(t, "B", &a), 0); /* known names still resolve */
	assert_int_equal(a, IP(198, 18, 0, 2));
	query(&q, 3, "e", 1);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.flags & 0xf, DNS_RCODE_SERVFAIL);
	assert_int_equal(r.an, 0);
	assert_int_equal(info.error, -ENOSPC);
	assert_false(info.has_addr);
	query(&q, 4, "c", 28);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.an, 1);
	struct dns_stats s;
	dns_table_stats(t, &s);
	assert_int_equal(s.servfail, 1);
	dns_table_free(t);
}

/* The whole /15: 131070 names, the last at 198.19.255.254, then -ENOSPC. */
static void test_whole_pool(void **state)
{
	struct dns_table *t = table(0);
	char name[32];
	uint32_t a = 0;

	(void)state;
	for (uint32_t i = 0; i < DNS_FAKE_POOL_SIZE; i++) {
		snprintf(name, sizeof name, "n%u.example", i);
		assert_int_equal(dns_table_addr_of(t, name, &a), 0);
	}
	assert_int_equal(a, IP(198, 19, 255, 254));
	assert_int_equal(dns_table_addr_of(t, "one.more", &a), -ENOSPC);
	assert_int_equal(dns_table_addr_of(t, "n0.example", &a), 0);
	assert_int_equal(a, IP(198, 18, 0, 1));
	assert_string_equal(dns_table_name_of(t, IP(198, 19, 255, 254)), "n131069.example");
	dns_table_free(t);
	/* Over the pool is the pool. */
	t = table(DNS_FAKE_POOL_SIZE + 5);
	dns_table_free(t);
	dns_table_free(NULL);
}

/* ---- many names ------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* A random name of 1..4 labels from [a-z0-9-_], unique through a numbered last label. */
static void random_name(char *out, size_t cap, unsigned serial)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t n = 0;
	unsigned labels = 1 + rnd() % 4;
	for (unsigned l = 0; l < labels; l++) {
		unsigned len = 1 + rnd() % 20;
		for (unsigned i = 0; i < len; i++)
			out[n++] = chars[rnd() % (sizeof chars - 1)];
		out[n++] = '.';
	}
	snprintf(out + n, cap - n, "n%u", serial);
}

static void vary_case(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z' && rnd() % 2)
			*s = (char)(*s - 'a' + 'A');
}

static void test_many_random_names(void **state)
{
	enum { N = 10000 };
	struct dns_table *t = table(0);
	char(*names)[128] = calloc(N, sizeof *names);
	uint8_t *seen = calloc(DNS_FAKE_POOL_SIZE + 2, 1);

	(void)state;
	assert_non_null(names);
	assert_non_null(seen);
	for (unsigned i = 0; i < N; i++) {
		struct msg q;
		uint8_t out[512];
		struct resp r;
		struct dns_query_info info;
		random_name(names[i], sizeof names[i], i);
		char spelled[128];
		strcpy(spelled, names[i]);
		vary_case(spelled);
		query(&q, i & 0xffff, spelled, rnd() % 2 ? 1 : 28);
		assert_true(ask(t, &q, out, &r, &info) > 0);
		assert_true(info.has_addr);
		assert_string_equal(info.qname, names[i]);
		uint32_t off = info.ipv4 - DNS_FAKE_NET;
		assert_true(dns_is_fake(info.ipv4));
		assert_int_equal(seen[off], 0);
		seen[off] = 1;
	}
	assert_int_equal(dns_table_count(t), N);
	for (unsigned i = 0; i < N; i++) {
		char spelled[130];
		uint32_t a;
		snprintf(spelled, sizeof spelled, "%s.", names[i]);
		vary_case(spelled);
		assert_int_equal(dns_table_addr_of(t, spelled, &a), 0);
		assert_string_equal(dns_table_name_of(t, a), names[i]);
	}
	assert_int_equal(dns_table_count(t), N);
	free(seen);
	free(names);
	dns_table_free(t);
}

/* ---- counters ------------------------------------------------------------------------ */

static void test_stats(void **state)
{
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct dns_stats s;

	(void)state;
	query(&q, 1, "a.example", 1);
	assert_true(dns_answer(t, q.b, q.n, false, out, sizeof out, NULL) > 0);
	query(&q, 2, "a.example", 16);
	assert_true(dns_answer(t, q.b, q.n, false, out, sizeof out, NULL) > 0);
	assert_int_equal(dns_answer(t, q.b, 5, false, out, sizeof out, NULL), -EBADMSG);
	dns_table_stats(t, &s);
	assert_int_equal(s.queries, 3);
	assert_int_equal(s.answered, 2);
	assert_int_equal(s.addresses, 1);
	assert_int_equal(s.nodata, 1);
	assert_int_equal(s.dropped[DNS_DROP_SHORT_HEADER], 1);
	assert_int_equal(s.dropped[DNS_DROP_NONE], 0);
	dns_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a),
		cmocka_unit_test(test_aaaa_is_mapped_a),
		cmocka_unit_test(test_nodata),
		cmocka_unit_test(test_same_name_same_address),
		cmocka_unit_test(test_different_names),
		cmocka_unit_test(test_is_fake_and_reverse),
		cmocka_unit_test(test_name_rules),
		cmocka_unit_test(test_refused_bytes),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_whole_pool),
		cmocka_unit_test(test_many_random_names),
		cmocka_unit_test(test_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
