/* test_netaddr.c — table-driven unit tests for policy/netaddr.c: IP literals, CIDR membership, destination patterns. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/netaddr.h"

/* Builds the expected address from a canonical literal ("a.b.c.d" or an IPv6 text form). */
static void canonical(const char *text, struct netaddr *out)
{
	memset(out, 0, sizeof *out);
	if (inet_pton(AF_INET, text, out->bytes) == 1) {
		out->family = 4;
		return;
	}
	if (inet_pton(AF_INET6, text, out->bytes) == 1) {
		out->family = 6;
		return;
	}
	fail_msg("bad canonical address in test table: %s", text);
}

static bool same_addr(const struct netaddr *a, const struct netaddr *b)
{
	size_t n = a->family == 4 ? 4 : 16;
	return a->family == b->family && memcmp(a->bytes, b->bytes, n) == 0;
}

/* ---- netaddr_parse ---------------------------------------------------------- */

struct parse_row {
	const char *text;
	const char *expect; /* canonical form, NULL = rejected */
	int line;
};

#define PA(t, e) { t, e, __LINE__ }

static const struct parse_row parse_rows[] = {
	PA("1.2.3.4", "1.2.3.4"),
	PA("0.0.0.0", "0.0.0.0"),
	PA("255.255.255.255", "255.255.255.255"),
	PA("127.1", "127.0.0.1"),
	PA("10.1.2", "10.1.0.2"),
	PA("2130706433", "127.0.0.1"),
	PA("0x7f.0.0.1", "127.0.0.1"),
	PA("0x7f.1", "127.0.0.1"),
	PA("0177.0.0.1", "127.0.0.1"),
	PA("0X7F000001", "127.0.0.1"),
	PA("017700000001", "127.0.0.1"),
	PA("4294967295", "255.255.255.255"),
	PA("0", "0.0.0.0"),
	PA("167772161", "10.0.0.1"),
	PA("::1", "::1"),
	PA("[::1]", "::1"),
	PA("::", "::"),
	PA("2001:db8::1", "2001:db8::1"),
	PA("2001:DB8::A", "2001:db8::a"),
	PA("[2001:db8::1]", "2001:db8::1"),
	PA("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
	PA("fe80::1", "fe80::1"),
	PA("0:0:0:0:0:0:0:1", "::1"),
	PA("::ffff:10.1.2.3", "10.1.2.3"),
	PA("[::ffff:10.1.2.3]", "10.1.2.3"),
	PA("::ffff:a01:203", "10.1.2.3"),
	PA("::FFFF:127.0.0.1", "127.0.0.1"),
	PA("::10.1.2.3", "::10.1.2.3"),
	PA("64:ff9b::1.2.3.4", "64:ff9b::102:304"),
	PA("", NULL),
	PA("[]", NULL),
	PA("1.2.3.4.5", NULL),
	PA("256.0.0.1", NULL),
	PA("1.2.3.256", NULL),
	PA("4294967296", NULL),
	PA("0x100000000", NULL),
	PA("08.0.0.1", NULL),
	PA("1..2.3", NULL),
	PA("abc", NULL),
	PA("example.com", NULL),
	PA("1.2.3.-4", NULL),
	PA("::1::2", NULL),
	PA("1:2:3:4:5:6:7:8:9", NULL),
	PA("12345::", NULL),
	PA("::g", NULL),
	PA(":::", NULL),
	PA("[::1", NULL),
	PA("::1]", NULL),
	PA("1.2.3.4/8", NULL),
	PA("2001:db8::/32", NULL),
	PA(" 1.2.3.4", NULL),
	PA("::1%lo", NULL),
	PA("1111111111111111111111111111111111111111111111111111111111111111111111", NULL),
};

static void test_parse_table(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof parse_rows / sizeof parse_rows[0]; i++) {
		const struct parse_row *r = &parse_rows[i];
		struct netaddr got, want;
		int rc = netaddr_parse(r->text, strlen(r->text), &got);
		if (!r->expect) {
			if (rc != -EINVAL) {
				print_error("line %d: netaddr_parse(\"%s\") = %d, expected -EINVAL\n",
					    r->line, r->text, rc);
				bad++;
			}
			continue;
		}
		canonical(r->expect, &want);
		if (rc != 0 || !same_addr(&got, &want)) {
			char buf[INET6_ADDRSTRLEN] = "?";
			if (rc == 0)
				inet_ntop(got.family == 4 ? AF_INET : AF_INET6, got.bytes, buf, sizeof buf);
			print_error("line %d: netaddr_parse(\"%s\") = %d %s, expected %s\n", r->line,
				    r->text, rc, buf, r->expect);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* Only len bytes count: the text need not be NUL-terminated. */
static void test_parse_length(void **state)
{
	struct netaddr a, want;

	(void)state;
	assert_int_equal(netaddr_parse("1.2.3.4junk", 7, &a), 0);
	canonical("1.2.3.4", &want);
	assert_true(same_addr(&a, &want));
	assert_int_equal(netaddr_parse("::1]", 3, &a), 0);
	canonical("::1", &want);
	assert_true(same_addr(&a, &want));
	assert_int_equal(netaddr_parse("10.0.0.1", 4, &a), 0);
	canonical("10.0.0.0", &want);
	assert_true(same_addr(&a, &want));
	assert_int_equal(netaddr_parse("1.2.3.4", 0, &a), -EINVAL);
	assert_int_equal(netaddr_parse("1.2\0.3", 6, &a), -EINVAL);
}

/* ---- netaddr_in ------------------------------------------------------------- */

struct in_row {
	const char *addr;
	const char *net;
	unsigned prefix;
	bool expect;
	int line;
};

#define IN(a, n, p, e) { a, n, p, e, __LINE__ }

static const struct in_row in_rows[] = {
	IN("10.1.2.3", "10.0.0.0", 8, true),
	IN("10.255.255.255", "10.0.0.0", 8, true),
	IN("11.1.2.3", "10.0.0.0", 8, false),
	IN("9.255.255.255", "10.0.0.0", 8, false),
	IN("1.2.3.4", "0.0.0.0", 0, true),
	IN("1.2.3.4", "1.2.3.4", 32, true),
	IN("1.2.3.5", "1.2.3.4", 32, false),
	IN("192.168.1.255", "192.168.0.0", 23, true),
	IN("192.168.2.0", "192.168.0.0", 23, false),
	IN("172.31.255.255", "172.16.0.0", 12, true),
	IN("172.32.0.0", "172.16.0.0", 12, false),
	IN("127.0.0.1", "127.0.0.0", 31, true),
	IN("127.0.0.2", "127.0.0.0", 31, false),
	IN("128.0.0.0", "0.0.0.0", 1, false),
	IN("127.255.255.255", "0.0.0.0", 1, true),
	IN("2001:db8::1", "2001:db8::", 32, true),
	IN("2001:db9::1", "2001:db8::", 32, false),
	IN("2001:db8:7fff::", "2001:db8::", 33, true),
	IN("2001:db8:8000::", "2001:db8::", 33, false),
	IN("::1", "::1", 128, true),
	IN("::2", "::1", 128, false),
	IN("::3", "::2", 127, true),
	IN("::4", "::2", 127, false),
	IN("::1", "::", 0, true),
	IN("fd12:3456::1", "fd00::", 8, true),
	IN("fe80::1", "fd00::", 8, false),
	IN("::1", "0.0.0.0", 0, false),
	IN("10.0.0.1", "::", 0, false),
	IN("::ffff:10.0.0.1", "10.0.0.0", 8, true),
	IN("10.0.0.1", "::ffff:10.0.0.0", 8, true),
};

static void test_in_table(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof in_rows / sizeof in_rows[0]; i++) {
		const struct in_row *r = &in_rows[i];
		struct netaddr a, n;
		assert_int_equal(netaddr_parse(r->addr, strlen(r->addr), &a), 0);
		assert_int_equal(netaddr_parse(r->net, strlen(r->net), &n), 0);
		bool got = netaddr_in(&a, &n, r->prefix);
		if (got != r->expect) {
			print_error("line %d: netaddr_in(%s, %s/%u) = %d, expected %d\n", r->line, r->addr,
				    r->net, r->prefix, got, r->expect);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* ---- netdest_parse ---------------------------------------------------------- */

struct dest_row {
	const char *text;
	enum policy_match m;
	const char *message; /* NULL = valid */
	enum netdest_host kind;
	const char *host; /* NAME / SUFFIX / GLOB: expected host; ADDR: canonical network */
	unsigned prefix;
	unsigned port;
	int line;
};

#define G POLICY_MATCH_GLOB
#define E POLICY_MATCH_EXACT
#define D(t, m, k, h, pre, port) { t, m, NULL, k, h, pre, port, __LINE__ }
#define DBAD(t, m, msg) { t, m, msg, NETDEST_ANY, NULL, 0, 0, __LINE__ }

static const struct dest_row dest_rows[] = {
	D("api.example.com:443", G, NETDEST_NAME, "api.example.com", 0, 443),
	D("api.example.com", G, NETDEST_NAME, "api.example.com", 0, 0),
	D("Api.Example.COM.", G, NETDEST_NAME, "api.example.com", 0, 0),
	D("api.example.com.:443", G, NETDEST_NAME, "api.example.com", 0, 443),
	D("localhost:8080", G, NETDEST_NAME, "localhost", 0, 8080),
	D("host:*", G, NETDEST_NAME, "host", 0, 0),
	D("host:1", G, NETDEST_NAME, "host", 0, 1),
	D("host:65535", G, NETDEST_NAME, "host", 0, 65535),
	D("host.", G, NETDEST_NAME, "host", 0, 0),
	D("my_host-1.internal", G, NETDEST_NAME, "my_host-1.internal", 0, 0),
	D("*", G, NETDEST_ANY, NULL, 0, 0),
	D("*:443", G, NETDEST_ANY, NULL, 0, 443),
	D("*:*", G, NETDEST_ANY, NULL, 0, 0),
	D("*.example.com", G, NETDEST_SUFFIX, "example.com", 0, 0),
	D("*.Example.COM:8443", G, NETDEST_SUFFIX, "example.com", 0, 8443),
	D("*.example.com.", G, NETDEST_SUFFIX, "example.com", 0, 0),
	D("api-?.example.org", G, NETDEST_GLOB, "api-?.example.org", 0, 0),
	D("API-*.X.org:80", G, NETDEST_GLOB, "api-*.x.org", 0, 80),
	D("a[bc]i.example.org:80", G, NETDEST_GLOB, "a[bc]i.example.org", 0, 80),
	D("*.*.example.org", G, NETDEST_GLOB, "*.*.example.org", 0, 0),
	D("10.0.0.0/8", G, NETDEST_ADDR, "10.0.0.0", 8, 0),
	D("10.0.0.0/8:443", G, NETDEST_ADDR, "10.0.0.0", 8, 443),
	D("10.0.0.1", G, NETDEST_ADDR, "10.0.0.1", 32, 0),
	D("10.0.0.1:22", G, NETDEST_ADDR, "10.0.0.1", 32, 22),
	D("192.168.0.0/0", G, NETDEST_ADDR, "192.168.0.0", 0, 0),
	D("127.1", G, NETDEST_ADDR, "127.0.0.1", 32, 0),
	D("[2001:db8::1]:443", G, NETDEST_ADDR, "2001:db8::1", 128, 443),
	D("2001:db8::/32", G, NETDEST_ADDR, "2001:db8::", 32, 0),
	D("[2001:db8::]/32", G, NETDEST_ADDR, "2001:db8::", 32, 0),
	D("[2001:db8::]/32:443", G, NETDEST_ADDR, "2001:db8::", 32, 443),
	D("::1", G, NETDEST_ADDR, "::1", 128, 0),
	D("[::1]", G, NETDEST_ADDR, "::1", 128, 0),
	D("[::1]:8080", G, NETDEST_ADDR, "::1", 128, 8080),
	D("fd00::/8", G, NETDEST_ADDR, "fd00::", 8, 0),
	/* an IPv4-mapped IPv6 network means the IPv4 network: /104 is 10.0.0.0/8 */
	D("::ffff:10.0.0.0/104", G, NETDEST_ADDR, "10.0.0.0", 8, 0),
	D("api.example.com:443", E, NETDEST_NAME, "api.example.com", 0, 443),
	D("API.example.com.", E, NETDEST_NAME, "api.example.com", 0, 0),
	D("10.0.0.1:80", E, NETDEST_ADDR, "10.0.0.1", 32, 80),
	D("[::1]:80", E, NETDEST_ADDR, "::1", 128, 80),

	DBAD("", G, "empty destination"),
	DBAD(":443", G, "empty host"),
	DBAD("host:0", G, "bad port '0'"),
	DBAD("host:65536", G, "bad port '65536'"),
	DBAD("host:99999999", G, "bad port"),
	DBAD("host:abc", G, "bad port 'abc'"),
	DBAD("host:", G, "bad port"),
	DBAD("host:-1", G, "bad port"),
	DBAD("host:4 43", G, "bad port"),
	DBAD("*:0", G, "bad port"),
	DBAD("[::1]:0", G, "bad port"),
	DBAD("[::1]:http", G, "bad port"),
	DBAD("10.0.0.0/33", G, "bad CIDR"),
	DBAD("10.0.0.0/", G, "bad CIDR"),
	DBAD("10.0.0.0/-1", G, "bad CIDR"),
	DBAD("10.0.0.0/8x", G, "bad CIDR"),
	DBAD("10.0.0.0/ 8", G, "bad CIDR"),
	DBAD("2001:db8::/129", G, "bad CIDR"),
	DBAD("[2001:db8::]/129", G, "bad CIDR"),
	DBAD("300.1.1.1/8", G, "bad IP address"),
	DBAD("[zz::1]", G, "bad IP address"),
	DBAD("1:2:3:4:5:6:7:8:9", G, "bad IP address"),
	DBAD("exa mple.com", G, "bad host name"),
	DBAD("a..b", G, "bad host name"),
	DBAD("ex!ample.com:80", G, "bad host name"),
	DBAD("*.a..b", G, "bad domain"),
	DBAD("api-[.x.com", G, "unterminated '['"),
	DBAD("[2001:db8::1", G, "unterminated '['"),
	DBAD("[2001:db8::1:443", G, "unterminated '['"),
	DBAD("[1.2.3.4]:80", G, "must hold an IPv6 address"),
	DBAD("[abc]", G, "must hold an IPv6 address"),
	DBAD("[::1]x", G, "unexpected text after ']'"),
	DBAD("[::1]:", G, "bad port"),
	DBAD("*.example.com", E, "under match: exact"),
	DBAD("api-?.x.org", E, "under match: exact"),
	DBAD("*:443", E, "under match: exact"),
	DBAD("api.example.com:443", POLICY_MATCH_PREFIX, "match: prefix is not supported"),
	DBAD("api.example.com:443", POLICY_MATCH_REGEX, "match: regex is not supported"),
};

static void test_dest_table(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof dest_rows / sizeof dest_rows[0]; i++) {
		const struct dest_row *r = &dest_rows[i];
		struct netdest d;
		char msg[512] = "";
		int rc = netdest_parse(r->text, r->m, &d, msg, sizeof msg);
		bool valid = r->message == NULL;
		if (!valid) {
			if (rc != -EINVAL || !strstr(msg, r->message)) {
				print_error("line %d: netdest_parse(\"%s\") = %d \"%s\", expected -EINVAL \"%s\"\n",
					    r->line, r->text, rc, msg, r->message);
				bad++;
			}
			continue;
		}
		if (rc != 0) {
			print_error("line %d: netdest_parse(\"%s\") = %d \"%s\", expected 0\n", r->line,
				    r->text, rc, msg);
			bad++;
			continue;
		}
		bool ok = d.kind == r->kind && d.port == r->port;
		if (ok && (r->kind == NETDEST_NAME || r->kind == NETDEST_SUFFIX || r->kind == NETDEST_GLOB))
			ok = strcmp(d.host, r->host) == 0;
		if (ok && r->kind == NETDEST_ADDR) {
			struct netaddr want;
			canonical(r->host, &want);
			ok = same_addr(&d.net, &want) && d.prefix == r->prefix;
		}
		if (!ok) {
			print_error("line %d: netdest_parse(\"%s\"): kind %d host \"%s\" prefix %u port %u, "
				    "expected kind %d host \"%s\" prefix %u port %u\n",
				    r->line, r->text, d.kind, d.host, d.prefix, d.port, r->kind,
				    r->host ? r->host : "", r->prefix, r->port);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void test_dest_long(void **state)
{
	char text[400], msg[256];
	struct netdest d;

	(void)state;
	memset(text, 'a', sizeof text - 1);
	text[sizeof text - 1] = '\0';
	assert_int_equal(netdest_parse(text, G, &d, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "too long"));

	memset(text, 0, sizeof text);
	for (int i = 0; i < 4; i++) {
		if (i)
			strcat(text, ".");
		memset(text + strlen(text), 'a', 63);
	}
	assert_int_equal(strlen(text), 255);
	assert_int_equal(netdest_parse(text, G, &d, msg, sizeof msg), -EINVAL);

	char label[80];
	memset(label, 'b', 64);
	strcpy(label + 64, ".com");
	assert_int_equal(netdest_parse(label, G, &d, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "bad host name"));
	strcpy(label + 63, ".com");
	assert_int_equal(netdest_parse(label, G, &d, msg, sizeof msg), 0);
	assert_int_equal(d.kind, NETDEST_NAME);
	assert_int_equal(netdest_parse("x", G, &d, NULL, 0), 0);
	assert_int_equal(netdest_parse("", G, &d, NULL, 0), -EINVAL);
}

/* ---- netaddr_host_normalise ---------------------------------------------- */

static void test_normalise(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(netaddr_host_normalise("API.Example.COM.", out, sizeof out), 15);
	assert_string_equal(out, "api.example.com");
	assert_int_equal(netaddr_host_normalise("[::1]", out, sizeof out), 3);
	assert_string_equal(out, "::1");
	assert_int_equal(netaddr_host_normalise("host", out, sizeof out), 4);
	assert_string_equal(out, "host");
	assert_int_equal(netaddr_host_normalise("abcd", out, 4), -ENAMETOOLONG);
	assert_int_equal(netaddr_host_normalise("abc.", out, 4), 3);
	assert_string_equal(out, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_length),
		cmocka_unit_test(test_in_table),
		cmocka_unit_test(test_dest_table),
		cmocka_unit_test(test_dest_long),
		cmocka_unit_test(test_normalise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
