/* test_addr.c — table-driven unit tests for proxy/addr.c: IP literal spellings, special-purpose ranges, this host's addresses. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "proxy/addr.h"

/* ---- spellings ------------------------------------------------------------------- */

struct spelling_row {
	const char *text;
	const char *canonical; /* NULL: not an IP literal */
	int line;
};

#define SP(t, c) { t, c, __LINE__ }

static const struct spelling_row spelling_rows[] = {
	/* 127.0.0.1 */
	SP("127.0.0.1", "127.0.0.1"),
	SP("2130706433", "127.0.0.1"),
	SP("0x7f000001", "127.0.0.1"),
	SP("0X7F000001", "127.0.0.1"),
	SP("017700000001", "127.0.0.1"),
	SP("0177.0.0.1", "127.0.0.1"),
	SP("0177.0.0.01", "127.0.0.1"),
	SP("0x7f.0.0.1", "127.0.0.1"),
	SP("0x7f.0x0.0x0.0x1", "127.0.0.1"),
	SP("0x7f.1", "127.0.0.1"),
	SP("0X7F.1", "127.0.0.1"),
	SP("0177.1", "127.0.0.1"),
	SP("127.1", "127.0.0.1"),
	SP("127.0.1", "127.0.0.1"),
	SP("127.000.000.001", "127.0.0.1"),
	SP("127.0.0.1.", "127.0.0.1"),
	SP("127.1.", "127.0.0.1"),
	SP("2130706433.", "127.0.0.1"),
	SP("[127.0.0.1]", "127.0.0.1"),
	SP("::ffff:127.0.0.1", "127.0.0.1"),
	SP("[::ffff:127.0.0.1]", "127.0.0.1"),
	SP("::ffff:7f00:1", "127.0.0.1"),
	SP("[::FFFF:7F00:0001]", "127.0.0.1"),
	SP("0:0:0:0:0:ffff:7f00:1", "127.0.0.1"),
	SP("0000:0000:0000:0000:0000:FFFF:127.0.0.1", "127.0.0.1"),
	/* 169.254.169.254 */
	SP("169.254.169.254", "169.254.169.254"),
	SP("2852039166", "169.254.169.254"),
	SP("0xa9fea9fe", "169.254.169.254"),
	SP("0251.0376.0251.0376", "169.254.169.254"),
	SP("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
	SP("169.254.43518", "169.254.169.254"),
	SP("169.16689662", "169.254.169.254"),
	SP("025177524776", "169.254.169.254"),
	SP("169.254.169.254.", "169.254.169.254"),
	SP("::ffff:169.254.169.254", "169.254.169.254"),
	SP("::ffff:a9fe:a9fe", "169.254.169.254"),
	SP("[::ffff:a9fe:a9fe]", "169.254.169.254"),
	/* 10.0.0.1 */
	SP("10.0.0.1", "10.0.0.1"),
	SP("167772161", "10.0.0.1"),
	SP("0xa000001", "10.0.0.1"),
	SP("012.0.0.1", "10.0.0.1"),
	SP("012.1", "10.0.0.1"),
	SP("10.1", "10.0.0.1"),
	SP("10.0.1", "10.0.0.1"),
	SP("0xa.1", "10.0.0.1"),
	SP("0xa.0.0.1", "10.0.0.1"),
	SP("01200000001", "10.0.0.1"),
	SP("10.0.0.1.", "10.0.0.1"),
	SP("::ffff:10.0.0.1", "10.0.0.1"),
	SP("[::ffff:a00:1]", "10.0.0.1"),
	/* IPv6 */
	SP("::1", "::1"),
	SP("[::1]", "::1"),
	SP("0:0:0:0:0:0:0:1", "::1"),
	SP("::0001", "::1"),
	SP("::", "::"),
	SP("0.0.0.0", "0.0.0.0"),
	SP("0", "0.0.0.0"),
	SP("2001:DB8::1", "2001:db8::1"),
	SP("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
	SP("fe80::1%eth0", "fe80::1"),
	SP("[fe80::1%25eth0]", "fe80::1"),
	SP("fe80::1%1", "fe80::1"),
	SP("::127.0.0.1", "::127.0.0.1"),
	SP("64:ff9b::a9fe:a9fe", "64:ff9b::a9fe:a9fe"),
	/* Names, not literals. */
	SP("example.com", NULL),
	SP("localhost", NULL),
	SP("127.0.0.1.example.com", NULL),
	SP("1.2.3.4.5", NULL),
	SP("4294967296", NULL),
	SP("256.256.256.256", NULL),
	SP("127.0.0.1..", NULL),
	SP(".127.0.0.1", NULL),
	SP("", NULL),
	SP(".", NULL),
	SP("[]", NULL),
	SP("::1%", NULL),
	SP("::1.", NULL),
	SP("127.0.0.1%eth0", NULL),
	SP("0x", NULL),
	SP("08", NULL),
	SP("127.0.0.1 ", NULL),
	SP(" 127.0.0.1", NULL),
	SP("127.0.0.1\n", NULL),
	SP("1:2:3:4:5:6:7:8:9", NULL),
	SP("[::1", NULL),
	SP("::1]", NULL),
	SP("[::1]:443", NULL),
};

static void test_spellings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof spelling_rows / sizeof spelling_rows[0]; i++) {
		const struct spelling_row *row = &spelling_rows[i];
		struct netaddr a;
		char text[ADDR_TEXT_MAX];
		int rc = addr_parse(row->text, strlen(row->text), &a);
		if (!row->canonical) {
			if (rc != -EINVAL)
				fail_msg("line %d: '%s' parsed as an address", row->line, row->text);
			continue;
		}
		if (rc != 0)
			fail_msg("line %d: '%s' not parsed (%d)", row->line, row->text, rc);
		int n = addr_format(&a, text, sizeof text);
		if (n < 0 || strcmp(text, row->canonical) != 0)
			fail_msg("line %d: '%s' became '%s'", row->line, row->text, n < 0 ? "" : text);
		assert_int_equal((size_t)n, strlen(text));
		/* The canonical text parses back to the same address, with netaddr_parse alone. */
		struct netaddr b;
		assert_int_equal(netaddr_parse(text, strlen(text), &b), 0);
		assert_memory_equal(&a, &b, sizeof a);
	}
}

/* addr_parse reads only len bytes: the text need not be NUL-terminated. */
static void test_parse_length(void **state)
{
	(void)state;
	struct netaddr a;
	assert_int_equal(addr_parse("127.0.0.1junk", 9, &a), 0);
	assert_int_equal(addr_parse("[::1]xyz", 5, &a), 0);
	assert_int_equal(a.family, 6);
	assert_int_equal(addr_parse("10.0.0.1.", 9, &a), 0);
	assert_int_equal(addr_parse("x", 0, &a), -EINVAL);
}

static void test_format_errors(void **state)
{
	(void)state;
	struct netaddr a;
	char small[9];
	assert_int_equal(addr_parse("127.0.0.1", 9, &a), 0);
	assert_int_equal(addr_format(&a, small, sizeof small), -ENOSPC);
	assert_int_equal(addr_format(&a, small, 0), -ENOSPC);
	a.family = 5;
	assert_int_equal(addr_format(&a, small, sizeof small), -EAFNOSUPPORT);
}

static void test_from_sockaddr(void **state)
{
	(void)state;
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	struct netaddr a, want;
	s4.sin_addr.s_addr = htonl(0xa9fea9fe);
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&s4, &a), 0);
	assert_int_equal(netaddr_parse("169.254.169.254", 15, &want), 0);
	assert_memory_equal(&a, &want, sizeof a);
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &s6.sin6_addr);
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&s6, &a), 0);
	assert_int_equal(netaddr_parse("10.0.0.1", 8, &want), 0);
	assert_memory_equal(&a, &want, sizeof a);
	inet_pton(AF_INET6, "2001:db8::7", &s6.sin6_addr);
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&s6, &a), 0);
	assert_int_equal(netaddr_parse("2001:db8::7", 11, &want), 0);
	assert_memory_equal(&a, &want, sizeof a);
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&su, &a), -EAFNOSUPPORT);
}

/* ---- classification -------------------------------------------------------------- */

struct class_row {
	const char *text;
	enum addr_class c;
	int line;
};

#define C(t, c) { t, ADDR_##c, __LINE__ }

static const struct class_row class_rows[] = {
	C("0.0.0.0", UNSPECIFIED),
	C("0", UNSPECIFIED),
	C("0.1.2.3", THIS_NETWORK),
	C("0.255.255.255", THIS_NETWORK),
	C("127.0.0.1", LOOPBACK),
	C("127.1", LOOPBACK),
	C("2130706433", LOOPBACK),
	C("127.255.255.254", LOOPBACK),
	C("10.0.0.1", PRIVATE),
	C("10.255.255.255", PRIVATE),
	C("172.16.0.1", PRIVATE),
	C("172.31.255.255", PRIVATE),
	C("192.168.1.1", PRIVATE),
	C("100.64.0.1", SHARED),
	C("100.127.255.255", SHARED),
	C("100.100.100.200", METADATA),
	C("169.254.0.1", LINK_LOCAL),
	C("169.254.255.255", LINK_LOCAL),
	C("169.254.169.254", METADATA),
	C("0xa9fea9fe", METADATA),
	C("::ffff:169.254.169.254", METADATA),
	C("169.254.169.253", LINK_LOCAL),
	C("192.0.0.8", PROTOCOL),
	C("192.0.0.170", PROTOCOL),
	C("198.18.0.1", FAKE_DNS),
	C("198.19.255.255", FAKE_DNS),
	C("224.0.0.1", MULTICAST),
	C("239.255.255.250", MULTICAST),
	C("240.0.0.1", RESERVED),
	C("255.255.255.254", RESERVED),
	C("255.255.255.255", BROADCAST),
	C("::", UNSPECIFIED),
	C("::1", LOOPBACK),
	C("[0:0:0:0:0:0:0:1]", LOOPBACK),
	C("fe80::1", LINK_LOCAL),
	C("fe80::1%eth0", LINK_LOCAL),
	C("febf:ffff::1", LINK_LOCAL),
	C("fc00::1", UNIQUE_LOCAL),
	C("fd12:3456::1", UNIQUE_LOCAL),
	C("fd00:ec2::254", METADATA),
	C("fd00:ec2::253", UNIQUE_LOCAL),
	C("fec0::1", SITE_LOCAL),
	C("ff02::1", MULTICAST),
	C("ff05::1:3", MULTICAST),
	C("100::1", DISCARD),
	C("64:ff9b:1::1", NAT64_LOCAL),
	C("2001::1", PROTOCOL),
	C("2001:1ff::1", PROTOCOL),
	/* IPv6 spellings carrying a restricted IPv4 address. */
	C("::127.0.0.1", LOOPBACK),
	C("::7f00:1", LOOPBACK),
	C("::a9fe:a9fe", METADATA),
	C("::ffff:0:7f00:1", LOOPBACK),
	C("::ffff:0:a00:1", PRIVATE),
	C("64:ff9b::7f00:1", LOOPBACK),
	C("64:ff9b::a9fe:a9fe", METADATA),
	C("64:ff9b::10.0.0.1", PRIVATE),
	C("64:ff9b::c612:1", FAKE_DNS),
	C("2002:7f00:1::1", LOOPBACK),
	C("2002:a9fe:a9fe::", METADATA),
	C("2002:c0a8:101::1", PRIVATE),
	C("::ffff:127.0.0.1", LOOPBACK),
	/* The internet, and the documentation ranges that play it in tests. */
	C("8.8.8.8", PUBLIC),
	C("1.1.1.1", PUBLIC),
	C("203.0.113.5", PUBLIC),
	C("192.0.2.1", PUBLIC),
	C("198.51.100.7", PUBLIC),
	C("9.255.255.255", PUBLIC),
	C("11.0.0.0", PUBLIC),
	C("100.63.255.255", PUBLIC),
	C("100.128.0.0", PUBLIC),
	C("126.255.255.255", PUBLIC),
	C("128.0.0.0", PUBLIC),
	C("169.253.255.255", PUBLIC),
	C("169.255.0.0", PUBLIC),
	C("172.15.255.255", PUBLIC),
	C("172.32.0.0", PUBLIC),
	C("192.0.1.255", PUBLIC),
	C("192.167.255.255", PUBLIC),
	C("192.169.0.0", PUBLIC),
	C("198.17.255.255", PUBLIC),
	C("198.20.0.0", PUBLIC),
	C("223.255.255.255", PUBLIC),
	C("2001:db8::1", PUBLIC),
	C("3fff::1", PUBLIC),
	C("2606:4700::1111", PUBLIC),
	C("2001:200::1", PUBLIC),
	C("fbff::1", PUBLIC),
	C("fe00::1", PUBLIC),
	C("64:ff9b::808:808", PUBLIC),
	C("64:ff9b::203.0.113.5", PUBLIC),
	C("2002:808:808::1", PUBLIC),
	C("::808:808", PUBLIC),
	/* This host's own addresses (see host_list). */
	C("203.0.113.77", HOST),
	C("2001:db8::77", HOST),
	C("64:ff9b::203.0.113.77", HOST),
	C("2002:cb00:714d::", HOST),
	C("203.0.113.78", PUBLIC),
	C("2001:db8::78", PUBLIC),
};

static void test_classify_table(void **state)
{
	(void)state;
	static const char *const hosts[] = { "203.0.113.77", "2001:db8::77", "127.0.0.1" };
	struct netaddr host_list[3];
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(addr_parse(hosts[i], strlen(hosts[i]), &host_list[i]), 0);
	for (size_t i = 0; i < sizeof class_rows / sizeof class_rows[0]; i++) {
		const struct class_row *row = &class_rows[i];
		struct netaddr a;
		if (addr_parse(row->text, strlen(row->text), &a) != 0)
			fail_msg("line %d: '%s' does not parse", row->line, row->text);
		enum addr_class c = addr_restricted(&a, host_list, 3);
		if (c != row->c)
			fail_msg("line %d: '%s' is %s, expected %s", row->line, row->text,
				 addr_class_name(c), addr_class_name(row->c));
		/* Without host addresses, HOST rows are public; no other row changes. */
		enum addr_class bare = addr_restricted(&a, NULL, 0);
		assert_int_equal(bare, row->c == ADDR_HOST ? ADDR_PUBLIC : row->c);
	}
}

/* Every spelling of the three classic targets is restricted the same way. */
static void test_spellings_restricted(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof spelling_rows / sizeof spelling_rows[0]; i++) {
		const struct spelling_row *row = &spelling_rows[i];
		struct netaddr a, canon;
		if (!row->canonical)
			continue;
		assert_int_equal(addr_parse(row->text, strlen(row->text), &a), 0);
		assert_int_equal(addr_parse(row->canonical, strlen(row->canonical), &canon), 0);
		assert_int_equal(addr_restricted(&a, NULL, 0), addr_restricted(&canon, NULL, 0));
		if (strcmp(row->canonical, "127.0.0.1") == 0)
			assert_int_equal(addr_restricted(&a, NULL, 0), ADDR_LOOPBACK);
		if (strcmp(row->canonical, "169.254.169.254") == 0)
			assert_int_equal(addr_restricted(&a, NULL, 0), ADDR_METADATA);
		if (strcmp(row->canonical, "10.0.0.1") == 0)
			assert_int_equal(addr_restricted(&a, NULL, 0), ADDR_PRIVATE);
	}
}

/* The range table's invariants: rows parse, host bits are zero, no duplicates, every class named. */
static void test_range_table(void **state)
{
	(void)state;
	size_t n;
	const struct addr_range *t = addr_ranges(&n);
	bool seen[ADDR_CLASS_MAX] = { false };
	assert_true(n > 20);
	for (size_t i = 0; i < n; i++) {
		struct netaddr net;
		const char *slash = strchr(t[i].cidr, '/');
		assert_non_null(slash);
		assert_int_equal(netaddr_parse(t[i].cidr, (size_t)(slash - t[i].cidr), &net), 0);
		char *end;
		unsigned long prefix = strtoul(slash + 1, &end, 10);
		assert_int_equal(*end, '\0');
		assert_true(prefix <= (net.family == 4 ? 32u : 128u));
		for (unsigned bit = (unsigned)prefix; bit < (net.family == 4 ? 32u : 128u); bit++)
			if (net.bytes[bit / 8] & (0x80 >> (bit % 8)))
				fail_msg("%s has host bits set", t[i].cidr);
		assert_true(t[i].class > ADDR_PUBLIC && t[i].class < ADDR_HOST);
		assert_non_null(t[i].rfc);
		assert_true(strlen(t[i].rfc) > 3);
		seen[t[i].class] = true;
		/* The network address itself classifies as its row (or a more specific one). */
		assert_int_not_equal(addr_restricted(&net, NULL, 0), ADDR_PUBLIC);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(t[i].cidr, t[j].cidr);
	}
	for (int c = ADDR_PUBLIC + 1; c < ADDR_HOST; c++)
		if (!seen[c])
			fail_msg("class %s has no range", addr_class_name(c));
	for (int c = 0; c < ADDR_CLASS_MAX; c++) {
		assert_string_not_equal(addr_class_name(c), "?");
		for (int d = 0; d < c; d++)
			assert_string_not_equal(addr_class_name(c), addr_class_name(d));
	}
	assert_string_equal(addr_class_name(ADDR_CLASS_MAX), "?");
}

static void test_host_addresses(void **state)
{
	(void)state;
	struct netaddr *list, lo;
	size_t n;
	assert_int_equal(addr_host_addresses(&list, &n), 0);
	assert_int_equal(addr_parse("127.0.0.1", 9, &lo), 0);
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		assert_true(list[i].family == 4 || list[i].family == 6);
		found |= memcmp(&list[i], &lo, sizeof lo) == 0;
		for (size_t j = 0; j < i; j++)
			assert_false(memcmp(&list[i], &list[j], sizeof lo) == 0);
		/* Every address of this host is restricted, whatever its range. */
		assert_int_not_equal(addr_restricted(&list[i], list, n), ADDR_PUBLIC);
	}
	if (!found)
		fail_msg("getifaddrs(3) lists no 127.0.0.1: is 'lo' down in this namespace?");
	free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_parse_length),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_from_sockaddr),
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_spellings_restricted),
		cmocka_unit_test(test_range_table),
		cmocka_unit_test(test_host_addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
