/* test_dns.c — table-driven unit tests for proxy/dns.c: fake addresses, answers, drops, EDNS0, TCP framing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/dns.h"

#define RD 0x0100
#define CD 0x0010
#define AD 0x0020
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* ---- a query builder -------------------------------------------------------- */

struct msg {
	uint8_t b[1024];
	size_t n;
};

static void put8(struct msg *m, unsigned v)
{
	assert_true(m->n < sizeof m->b);
	m->b[m->n++] = (uint8_t)v;
}

static void put16(struct msg *m, unsigned v)
{
	put8(m, v >> 8);
	put8(m, v & 0xff);
}

static void put_label(struct msg *m, const void *bytes, size_t len)
{
	put8(m, (unsigned)len);
	for (size_t i = 0; i < len; i++)
		put8(m, ((const uint8_t *)bytes)[i]);
}

/* Writes a dotted name in wire form, root included; "" is the root name. */
static void put_name(struct msg *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t len = dot ? (size_t)(dot - name) : strlen(name);
		put_label(m, name, len);
		name += len + (dot ? 1 : 0);
	}
	put8(m, 0);
}

static void header(struct msg *m, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		   unsigned ar)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
}

/* An OPT pseudo-record (RFC 6891 §6.1.2) with no options. */
static void put_opt(struct msg *m, unsigned udp, unsigned version, bool dnssec_ok)
{
	put8(m, 0);
	put16(m, 41);
	put16(m, udp);
	put8(m, 0);
	put8(m, version);
	put16(m, dnssec_ok ? 0x8000 : 0);
	put16(m, 0);
}

/* The usual query: one question, RD set. */
static void query(struct msg *m, unsigned id, const char *name, unsigned qtype)
{
	header(m, id, RD, 1, 0, 0, 0);
	put_name(m, name);
	put16(m, qtype);
	put16(m, 1);
}

/* ---- an independent response parser ------------------------------------------ */

struct rr {
	char name[512];
	unsigned type, cls, rdlen;
	uint32_t ttl;
	uint8_t rdata[64];
};

struct resp {
	unsigned id, flags, qd, an, ns, ar;
	char qname[512];
	unsigned qtype, qclass;
	size_t qend; /* where the question ends */
	struct rr ans[4];
	bool opt;
	unsigned opt_udp, opt_ext_rcode, opt_version;
	bool opt_do;
};

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Reads a possibly compressed name, following at most 16 pointers. */
static int read_name(const uint8_t *m, size_t len, size_t *pos, char *out, size_t cap)
{
	size_t p = *pos, o = 0;
	bool jumped = false;
	out[0] = '\0';
	for (int hops = 0; hops < 16;) {
		if (p >= len)
			return -1;
		unsigned c = m[p];
		if ((c & 0xc0) == 0xc0) {
			if (p + 2 > len)
				return -1;
			if (!jumped)
				*pos = p + 2;
			jumped = true;
			p = get16(m + p) & 0x3fff;
			hops++;
			continue;
		}
		if (c & 0xc0)
			return -1;
		if (c == 0) {
			if (!jumped)
				*pos = p + 1;
			out[o] = '\0';
			return 0;
		}
		if (p + 1 + c > len || o + c + 2 > cap)
			return -1;
		if (o)
			out[o++] = '.';
		memcpy(out + o, m + p + 1, c);
		o += c;
		p += 1 + c;
	}
	return -1;
}

static int read_rr(const uint8_t *m, size_t len, size_t *pos, struct rr *r)
{
	if (read_name(m, len, pos, r->name, sizeof r->name) != 0 || *pos + 10 > len)
		return -1;
	const uint8_t *p = m + *pos;
	r->type = get16(p);
	r->cls = get16(p + 2);
	r->ttl = (uint32_t)get16(p + 4) << 16 | get16(p + 6);
	r->rdlen = get16(p + 8);
	if (*pos + 10 + r->rdlen > len || r->rdlen > sizeof r->rdata)
		return -1;
	memcpy(r->rdata, p + 10, r->rdlen);
	*pos += 10 + r->rdlen;
	return 0;
}

/* Parses a whole response; every byte must belong to a record the header counts. */
static int parse_resp(const uint8_t *m, size_t len, struct resp *r)
{
	memset(r, 0, sizeof *r);
	if (len < 12)
		return -1;
	r->id = get16(m);
	r->flags = get16(m + 2);
	r->qd = get16(m + 4);
	r->an = get16(m + 6);
	r->ns = get16(m + 8);
	r->ar = get16(m + 10);
	size_t pos = 12;
	if (r->qd > 1 || r->an > 4 || r->ns != 0 || r->ar > 1)
		return -1;
	if (r->qd) {
		if (read_name(m, len, &pos, r->qname, sizeof r->qname) != 0 || pos + 4 > len)
			return -1;
		r->qtype = get16(m + pos);
		r->qclass = get16(m + pos + 2);
		pos += 4;
	}
	r->qend = pos;
	for (unsigned i = 0; i < r->an; i++)
		if (read_rr(m, len, &pos, &r->ans[i]) != 0)
			return -1;
	if (r->ar) {
		struct rr o;
		if (read_rr(m, len, &pos, &o) != 0 || o.type != 41 || o.name[0] != '\0')
			return -1;
		r->opt = true;
		r->opt_udp = o.cls;
		r->opt_ext_rcode = o.ttl >> 24;
		r->opt_version = (o.ttl >> 16) & 0xff;
		r->opt_do = (o.ttl & 0x8000) != 0;
	}
	return pos == len ? 0 : -1;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* Answers q over UDP into out, parses the response into r and checks the question is echoed. */
static int ask(struct dns_table *t, const struct msg *q, uint8_t *out, struct resp *r,
	       struct dns_query_info *info)
{
	int n = dns_answer(t, q->b, q->n, false, out, 512, info);
	if (n < 0)
		return n;
	assert_int_equal(parse_resp(out, (size_t)n, r), 0);
	assert_true(r->flags & 0x8000);
	assert_int_equal(r->id, get16(q->b));
	if (r->qd) {
		/* The question, byte for byte (its case too). */
		size_t qlen = r->qend - 12;
		assert_true(qlen <= q->n - 12);
		assert_memory_equal(out + 12, q->b + 12, qlen);
	}
	return n;
}

static struct dns_table *table(uint32_t capacity)
{
	struct dns_table *t = dns_table_new(capacity);
	assert_non_null(t);
	return t;
}

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
#define L63 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

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

/* ---- drops ---------------------------------------------------------------------- */

static void mk_empty(struct msg *m)
{
	m->n = 0;
}

static void mk_short(struct msg *m)
{
	query(m, 1, "a", 1);
	m->n = 11;
}

static void mk_response(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[2] |= 0x80;
}

static void mk_response_notify(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[2] |= 0x80 | 4 << 3;
}

static void mk_qd0(struct msg *m)
{
	header(m, 1, RD, 0, 0, 0, 0);
}

static void mk_qd2(struct msg *m)
{
	header(m, 1, RD, 2, 0, 0, 0);
	put_name(m, "a");
	put16(m, 1);
	put16(m, 1);
	put_name(m, "b");
	put16(m, 1);
	put16(m, 1);
}

static void mk_an1(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[7] = 1;
}

static void mk_ns1(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[9] = 1;
}

static void mk_label64(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put_label(m, L63 "a", 64);
	put8(m, 0);
	put16(m, 1);
	put16(m, 1);
}

static void mk_label_ext(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put8(m, 0x80);
	put8(m, 0);
	put16(m, 1);
	put16(m, 1);
}

/* Four 63-octet labels: 4 × 64 + 1 = 257 octets. */
static void mk_name256(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put_name(m, L63 "." L63 "." L63 "." L63);
	put16(m, 1);
	put16(m, 1);
}

/* 3 × 64 + 62 + 1 + 1: exactly 256 octets. */
static void mk_name256_exact(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put_name(m, L63 "." L63 "." L63 "." "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	put16(m, 1);
	put16(m, 1);
}

static void mk_pointer(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put_label(m, "www", 3);
	put16(m, 0xc000 | 29);
	put16(m, 1);
	put16(m, 1);
	put_name(m, "example");
}

/* A pointer to itself: a parser that follows it never ends. */
static void mk_pointer_loop(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put16(m, 0xc00c);
	put16(m, 1);
	put16(m, 1);
}

static void mk_trunc_name(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put8(m, 5);
	put8(m, 'a');
	put8(m, 'b');
}

static void mk_trunc_unterminated(struct msg *m)
{
	header(m, 1, RD, 1, 0, 0, 0);
	put_label(m, "abc", 3);
}

static void mk_trunc_type(struct msg *m)
{
	query(m, 1, "a.example", 1);
	m->n -= 3;
}

static void mk_class(struct msg *m, unsigned cls)
{
	query(m, 1, "version.bind", 16);
	m->b[m->n - 2] = (uint8_t)(cls >> 8);
	m->b[m->n - 1] = (uint8_t)cls;
}

static void mk_class_ch(struct msg *m)
{
	mk_class(m, 3);
}

static void mk_class_any(struct msg *m)
{
	mk_class(m, 255);
}

static void mk_class0(struct msg *m)
{
	mk_class(m, 0);
}

static void mk_trailing(struct msg *m)
{
	query(m, 1, "a", 1);
	put8(m, 0);
}

static void mk_ar_missing(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[11] = 1;
}

static void mk_ar_trunc_rdata(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[11] = 1;
	put_opt(m, 4096, 0, false);
	m->b[m->n - 1] = 4; /* RDLENGTH 4, no RDATA */
}

static void mk_opt_not_root(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[11] = 1;
	put_label(m, "x", 1);
	put_opt(m, 4096, 0, false); /* its root octet ends the name "x" */
}

static void mk_opt_twice(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[11] = 2;
	put_opt(m, 4096, 0, false);
	put_opt(m, 4096, 0, false);
}

static void mk_ar_bad_label(struct msg *m)
{
	query(m, 1, "a", 1);
	m->b[11] = 1;
	put8(m, 0x41);
}

struct drop_row {
	const char *what;
	void (*make)(struct msg *);
	enum dns_drop reason;
	int line;
};

#define DR(f, r) { #f, f, r, __LINE__ }

static const struct drop_row drop_rows[] = {
	DR(mk_empty, DNS_DROP_SHORT_HEADER),
	DR(mk_short, DNS_DROP_SHORT_HEADER),
	DR(mk_response, DNS_DROP_RESPONSE),
	DR(mk_response_notify, DNS_DROP_RESPONSE),
	DR(mk_qd0, DNS_DROP_QDCOUNT),
	DR(mk_qd2, DNS_DROP_QDCOUNT),
	DR(mk_an1, DNS_DROP_SECTIONS),
	DR(mk_ns1, DNS_DROP_SECTIONS),
	DR(mk_label64, DNS_DROP_LABEL),
	DR(mk_label_ext, DNS_DROP_LABEL),
	DR(mk_name256, DNS_DROP_NAME_LONG),
	DR(mk_name256_exact, DNS_DROP_NAME_LONG),
	DR(mk_pointer, DNS_DROP_POINTER),
	DR(mk_pointer_loop, DNS_DROP_POINTER),
	DR(mk_trunc_name, DNS_DROP_TRUNCATED),
	DR(mk_trunc_unterminated, DNS_DROP_TRUNCATED),
	DR(mk_trunc_type, DNS_DROP_TRUNCATED),
	DR(mk_class_ch, DNS_DROP_QCLASS),
	DR(mk_class_any, DNS_DROP_QCLASS),
	DR(mk_class0, DNS_DROP_QCLASS),
	DR(mk_trailing, DNS_DROP_TRAILING),
	DR(mk_ar_missing, DNS_DROP_TRUNCATED),
	DR(mk_ar_trunc_rdata, DNS_DROP_TRUNCATED),
	DR(mk_opt_not_root, DNS_DROP_OPT),
	DR(mk_opt_twice, DNS_DROP_OPT),
	DR(mk_ar_bad_label, DNS_DROP_LABEL),
};

static void test_drops(void **state)
{
	struct dns_table *t = table(0);
	uint64_t want[DNS_DROP_MAX] = { 0 };
	size_t rows = sizeof drop_rows / sizeof drop_rows[0];

	(void)state;
	for (size_t i = 0; i < rows; i++) {
		const struct drop_row *d = &drop_rows[i];
		struct msg q;
		uint8_t out[514];
		struct dns_query_info info;
		memset(&q, 0, sizeof q);
		d->make(&q);
		for (int tcp = 0; tcp < 2; tcp++) {
			memset(out, 0xaa, sizeof out);
			int rc = dns_answer(t, q.b, q.n, tcp, out, sizeof out, &info);
			if (rc != -EBADMSG || info.drop != d->reason)
				fail_msg("line %d (%s, tcp %d): rc %d drop %s, expected -EBADMSG %s", d->line,
					 d->what, tcp, rc, dns_drop_name(info.drop), dns_drop_name(d->reason));
			assert_int_equal(info.rcode, -1);
			for (size_t j = 0; j < sizeof out; j++)
				if (out[j] != 0xaa)
					fail_msg("line %d: wrote output for a dropped message", d->line);
			want[d->reason]++;
		}
	}
	struct dns_stats s;
	dns_table_stats(t, &s);
	assert_memory_equal(s.dropped, want, sizeof want);
	assert_int_equal(s.queries, 2 * rows);
	assert_int_equal(s.answered, 0);
	assert_int_equal(dns_table_count(t), 0);
	dns_table_free(t);
}

/* The longest name (255 octets) is accepted and answered. */
static void test_longest_name(void **state)
{
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	(void)state;
	query(&q, 1, L63 "." L63 "." L63 "." "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 28);
	int n = ask(t, &q, out, &r, &info);
	assert_int_equal(n, 12 + 255 + 4 + 28);
	assert_int_equal(strlen(info.qname), DNS_NAME_MAX);
	assert_true(info.has_addr);
	/* With EDNS, the longest response there is: 310 bytes. */
	header(&q, 1, RD, 1, 0, 0, 1);
	put_name(&q, L63 "." L63 "." L63 "." "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	put16(&q, 28);
	put16(&q, 1);
	put_opt(&q, 4096, 0, false);
	assert_int_equal(ask(t, &q, out, &r, &info), 310);
	dns_table_free(t);
}

/* ---- header fields --------------------------------------------------------------- */

struct flag_row {
	unsigned id, qflags, rflags;
	int line;
};

/* QR, AA and RA always; RD and CD copied; AD, TC and Z never. */
static const struct flag_row flag_rows[] = {
	{ 0x0000, 0, 0x8480, __LINE__ },
	{ 0xffff, RD, 0x8580, __LINE__ },
	{ 0x1234, RD | CD, 0x8590, __LINE__ },
	{ 0xbeef, CD | AD, 0x8490, __LINE__ },
	{ 0x0001, 0x0040 | 0x0200, 0x8480, __LINE__ }, /* Z and TC in a query */
	{ 0x8000, 0x0400 | 0x0080 | RD, 0x8580, __LINE__ }, /* AA and RA in a query */
};

static void test_flags(void **state)
{
	struct dns_table *t = table(0);

	(void)state;
	for (size_t i = 0; i < sizeof flag_rows / sizeof flag_rows[0]; i++) {
		const struct flag_row *f = &flag_rows[i];
		struct msg q;
		uint8_t out[512];
		struct resp r;
		struct dns_query_info info;
		query(&q, f->id, "flags.example", 1);
		q.b[2] = (uint8_t)(f->qflags >> 8);
		q.b[3] = (uint8_t)f->qflags;
		assert_true(ask(t, &q, out, &r, &info) > 0);
		if (r.id != f->id || r.flags != f->rflags)
			fail_msg("line %d: id %04x flags %04x, expected %04x %04x", f->line, r.id, r.flags,
				 f->id, f->rflags);
	}
	dns_table_free(t);
}

/* Opcodes other than QUERY: NOTIMP, the header alone, ID, opcode and RD echoed. */
static void test_notimp(void **state)
{
	static const unsigned opcodes[] = { 1, 2, 3, 4, 5, 6, 15 };
	struct dns_table *t = table(0);

	(void)state;
	for (size_t i = 0; i < sizeof opcodes / sizeof opcodes[0]; i++) {
		struct msg q;
		uint8_t out[512];
		struct resp r;
		struct dns_query_info info;
		query(&q, 0x4242, "a.example", 6);
		q.b[2] |= (uint8_t)(opcodes[i] << 3);
		int n = dns_answer(t, q.b, q.n, false, out, sizeof out, &info);
		assert_int_equal(n, 12);
		assert_int_equal(parse_resp(out, (size_t)n, &r), 0);
		assert_int_equal(r.id, 0x4242);
		assert_int_equal(r.flags, 0x8000 | opcodes[i] << 11 | RD | DNS_RCODE_NOTIMP);
		assert_int_equal(r.qd + r.an + r.ns + r.ar, 0);
		assert_int_equal(info.rcode, DNS_RCODE_NOTIMP);
		assert_int_equal(info.opcode, opcodes[i]);
	}
	/* Even garbage after the header: NOTIMP does not parse it. */
	uint8_t junk[13] = { 0, 1, 0x28, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0 };
	uint8_t out[14];
	assert_int_equal(dns_answer(t, junk, sizeof junk, true, out, sizeof out, NULL), 14);
	assert_int_equal(get16(out), 12);
	struct dns_stats s;
	dns_table_stats(t, &s);
	assert_int_equal(s.notimp, 8);
	dns_table_free(t);
}

/* ---- EDNS0 ------------------------------------------------------------------------ */

static void test_edns(void **state)
{
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	(void)state;
	header(&q, 9, RD, 1, 0, 0, 1);
	put_name(&q, "edns.example");
	put16(&q, 1);
	put16(&q, 1);
	put_opt(&q, 4096, 0, true);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.an, 1);
	assert_true(r.opt);
	assert_int_equal(r.opt_udp, DNS_EDNS_UDP_SIZE);
	assert_int_equal(r.opt_version, 0);
	assert_int_equal(r.opt_ext_rcode, 0);
	assert_true(r.opt_do);
	assert_true(info.edns);

	/* DO clear, a payload size below 512 (read as 512): a 112-byte answer is not truncated. */
	header(&q, 10, RD, 1, 0, 0, 1);
	put_name(&q, "a-rather-long-name-for-a-small-payload.edns.example.com");
	put16(&q, 28);
	put16(&q, 1);
	put_opt(&q, 100, 0, false);
	assert_int_equal(ask(t, &q, out, &r, &info), 112);
	assert_int_equal(r.an, 1);
	assert_false(info.truncated);
	assert_true(r.opt);
	assert_false(r.opt_do);

	/* Version 1: BADVERS (16 = extended 1, header 0), no answer (RFC 6891 §6.1.3). */
	header(&q, 11, RD, 1, 0, 0, 1);
	put_name(&q, "edns.example");
	put16(&q, 1);
	put16(&q, 1);
	put_opt(&q, 4096, 1, false);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.flags & 0xf, 0);
	assert_int_equal(r.an, 0);
	assert_int_equal(r.opt_ext_rcode, 1);
	assert_int_equal(r.opt_version, 0);
	assert_int_equal(info.rcode, DNS_RCODE_BADVERS);

	/* Another additional record (a TSIG-shaped one, its owner compressed) is ignored; OPT options too. */
	header(&q, 12, RD, 1, 0, 0, 2);
	put_name(&q, "edns.example");
	put16(&q, 1);
	put16(&q, 1);
	put16(&q, 0xc00c);
	put16(&q, 250);
	put16(&q, 255);
	put16(&q, 0);
	put16(&q, 0);
	put16(&q, 3);
	put8(&q, 1);
	put8(&q, 2);
	put8(&q, 3);
	put_opt(&q, 1232, 0, false);
	q.b[q.n - 2] = 0;
	q.b[q.n - 1] = 12; /* RDLENGTH: one cookie option */
	put16(&q, 10);
	put16(&q, 8);
	for (int i = 0; i < 8; i++)
		put8(&q, (unsigned)i);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.an, 1);
	assert_true(r.opt);

	/* Without OPT, a non-OPT additional record: no OPT back. */
	header(&q, 13, RD, 1, 0, 0, 1);
	put_name(&q, "edns.example");
	put16(&q, 1);
	put16(&q, 1);
	put_name(&q, "key");
	put16(&q, 250);
	put16(&q, 255);
	put16(&q, 0);
	put16(&q, 0);
	put16(&q, 0);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_false(r.opt);
	assert_int_equal(r.ar, 0);
	dns_table_free(t);
}

/* ---- truncation and buffer sizes --------------------------------------------------- */

static void test_truncation(void **state)
{
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t out[600];
	struct resp r;
	struct dns_query_info info;

	(void)state;
	query(&q, 1, "tc.example", 28); /* 12 + 16 + 28 = 56 bytes */
	int full = dns_answer(t, q.b, q.n, false, out, sizeof out, &info);
	assert_int_equal(full, 56);
	assert_int_equal(dns_answer(t, q.b, q.n, false, out, 56, &info), 56);
	assert_false(info.truncated);
	/* One byte short: the answer goes, TC comes. */
	int n = dns_answer(t, q.b, q.n, false, out, 55, &info);
	assert_int_equal(n, 28);
	assert_int_equal(parse_resp(out, (size_t)n, &r), 0);
	assert_true(r.flags & 0x0200);
	assert_int_equal(r.an, 0);
	assert_int_equal(r.qd, 1);
	assert_true(info.truncated);
	assert_false(info.has_addr);
	/* Not even the question fits. */
	assert_int_equal(dns_answer(t, q.b, q.n, false, out, 27, &info), -ENOSPC);
	/* TCP never truncates: too small a buffer is -ENOSPC. */
	assert_int_equal(dns_answer(t, q.b, q.n, true, out, 57, &info), -ENOSPC);
	assert_int_equal(dns_answer(t, q.b, q.n, true, out, 58, &info), 58);
	assert_int_equal(dns_answer(t, q.b, q.n, true, out, 1, &info), -ENOSPC);
	struct dns_stats s;
	dns_table_stats(t, &s);
	assert_int_equal(s.truncated, 1);
	dns_table_free(t);
}

/* ---- TCP -------------------------------------------------------------------------- */

/* Over TCP the response is the UDP one behind a 2-byte length. */
static void test_tcp_answer(void **state)
{
	struct dns_table *t = table(0);
	struct msg q;
	uint8_t udp[512], tcp[514];

	(void)state;
	query(&q, 77, "tcp.example", 1);
	int n = dns_answer(t, q.b, q.n, false, udp, sizeof udp, NULL);
	int m = dns_answer(t, q.b, q.n, true, tcp, sizeof tcp, NULL);
	assert_true(n > 0);
	assert_int_equal(m, n + 2);
	assert_int_equal(get16(tcp), (unsigned)n);
	assert_memory_equal(tcp + 2, udp, (size_t)n);
	dns_table_free(t);
}

struct frame_row {
	const char *what;
	uint8_t bytes[8];
	size_t len;
	size_t consumed, msglen;
	int line;
};

static const struct frame_row frame_rows[] = {
	{ "empty", { 0 }, 0, 0, 0, __LINE__ },
	{ "one byte", { 0 }, 1, 0, 0, __LINE__ },
	{ "prefix only", { 0, 3 }, 2, 0, 0, __LINE__ },
	{ "partial", { 0, 3, 'a', 'b' }, 4, 0, 0, __LINE__ },
	{ "exact", { 0, 3, 'a', 'b', 'c' }, 5, 5, 3, __LINE__ },
	{ "more behind", { 0, 3, 'a', 'b', 'c', 0, 1 }, 7, 5, 3, __LINE__ },
	{ "zero length", { 0, 0, 0, 1, 'x' }, 5, 2, 0, __LINE__ },
	{ "big, partial", { 0xff, 0xff, 1, 2, 3 }, 5, 0, 0, __LINE__ },
};

static void test_tcp_frames(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof frame_rows / sizeof frame_rows[0]; i++) {
		const struct frame_row *f = &frame_rows[i];
		const uint8_t *msg = NULL;
		size_t msglen = 99;
		size_t got = dns_tcp_next(f->bytes, f->len, &msg, &msglen);
		if (got != f->consumed || (got && (msglen != f->msglen || msg != f->bytes + 2)))
			fail_msg("line %d (%s): consumed %zu msglen %zu", f->line, f->what, got, msglen);
	}
	/* The largest frame. */
	uint8_t *big = calloc(1, DNS_TCP_FRAME_MAX);
	const uint8_t *msg;
	size_t msglen;
	assert_non_null(big);
	big[0] = big[1] = 0xff;
	assert_int_equal(dns_tcp_next(big, DNS_TCP_FRAME_MAX - 1, &msg, &msglen), 0);
	assert_int_equal(dns_tcp_next(big, DNS_TCP_FRAME_MAX, &msg, &msglen), DNS_TCP_FRAME_MAX);
	assert_int_equal(msglen, 65535);
	free(big);
}

/* Three queries in one stream, arriving a byte at a time, then all at once. */
static void test_tcp_stream(void **state)
{
	static const char *const names[] = { "one.example", "two.example", "three.example" };
	struct dns_table *t = table(0);
	uint8_t stream[1024], buf[1024];
	size_t slen = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct msg q;
		query(&q, (unsigned)i, names[i], 1);
		stream[slen++] = (uint8_t)(q.n >> 8);
		stream[slen++] = (uint8_t)q.n;
		memcpy(stream + slen, q.b, q.n);
		slen += q.n;
	}
	for (int whole = 0; whole < 2; whole++) {
		size_t have = 0, next = 0, answered = 0;
		while (next < slen || have > 0) {
			if (next < slen) {
				size_t step = whole ? slen : 1;
				memcpy(buf + have, stream + next, step);
				have += step;
				next += step;
			}
			const uint8_t *msg;
			size_t msglen, used;
			size_t before = have;
			while ((used = dns_tcp_next(buf, have, &msg, &msglen)) > 0) {
				uint8_t out[514];
				struct dns_query_info info;
				assert_true(dns_answer(t, msg, msglen, true, out, sizeof out, &info) > 0);
				assert_string_equal(info.qname, names[answered]);
				assert_int_equal(info.ipv4, DNS_FAKE_NET + 1 + answered);
				answered++;
				memmove(buf, buf + used, have - used);
				have -= used;
			}
			if (next >= slen && have == before)
				break;
		}
		assert_int_equal(answered, 3);
		assert_int_equal(have, 0);
	}
	dns_table_free(t);
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

/* ---- tables' invariants ----------------------------------------------------------- */

static void test_drop_names(void **state)
{
	(void)state;
	for (int i = 0; i < DNS_DROP_MAX; i++) {
		const char *a = dns_drop_name((enum dns_drop)i);
		assert_string_not_equal(a, "?");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(a, dns_drop_name((enum dns_drop)j));
	}
	assert_string_equal(dns_drop_name(DNS_DROP_MAX), "?");
	assert_string_equal(dns_drop_name((enum dns_drop)-1), "?");
}

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
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_longest_name),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_notimp),
		cmocka_unit_test(test_edns),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_tcp_answer),
		cmocka_unit_test(test_tcp_frames),
		cmocka_unit_test(test_tcp_stream),
		cmocka_unit_test(test_many_random_names),
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test(test_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
