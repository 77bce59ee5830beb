/*
 * dns_wire.h — DNS messages for test_dns.c and test_dns_parse.c: a query builder, an
 * independent response parser (RFC 1035 §4.1, RFC 6891 for OPT) and ask(), which answers a
 * query through dns_answer() and checks the question comes back as it went.
 */
#ifndef AIRLOCK_TEST_DNS_WIRE_H
#define AIRLOCK_TEST_DNS_WIRE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "proxy/dns.h"

#define RD 0x0100
#define CD 0x0010
#define AD 0x0020
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* A label of 63 bytes, the longest there is (RFC 1035 §2.3.4). */
#define L63 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* ---- a query builder -------------------------------------------------------- */

struct msg {
	uint8_t b[1024];
	size_t n;
};

static inline void put8(struct msg *m, unsigned v)
{
	assert_true(m->n < sizeof m->b);
	m->b[m->n++] = (uint8_t)v;
}

static inline void put16(struct msg *m, unsigned v)
{
	put8(m, v >> 8);
	put8(m, v & 0xff);
}

static inline void put_label(struct msg *m, const void *bytes, size_t len)
{
	put8(m, (unsigned)len);
	for (size_t i = 0; i < len; i++)
		put8(m, ((const uint8_t *)bytes)[i]);
}

/* Writes a dotted name in wire form, root included; "" is the root name. */
static inline void put_name(struct msg *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t len = dot ? (size_t)(dot - name) : strlen(name);
		put_label(m, name, len);
		name += len + (dot ? 1 : 0);
	}
	put8(m, 0);
}

static inline void header(struct msg *m, unsigned id, unsigned flags, unsigned qd, unsigned an,
			  unsigned ns, unsigned ar)
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
static inline void put_opt(struct msg *m, unsigned udp, unsigned version, bool dnssec_ok)
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
static inline void query(struct msg *m, unsigned id, const char *name, unsigned qtype)
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

static inline unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Reads a possibly compressed name, following at most 16 pointers. */
static inline int read_name(const uint8_t *m, size_t len, size_t *pos, char *out, size_t cap)
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

static inline int read_rr(const uint8_t *m, size_t len, size_t *pos, struct rr *r)
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
static inline int parse_resp(const uint8_t *m, size_t len, struct resp *r)
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

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/*
 * Answers q over UDP into out, parses the response into r and checks the question is echoed;
 * returns dns_answer()'s result (r stays zeroed when that is an error).
 */
static inline int ask(struct dns_table *t, const struct msg *q, uint8_t *out, struct resp *r,
		      struct dns_query_info *info)
{
	memset(r, 0, sizeof *r);
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

static inline struct dns_table *table(uint32_t capacity)
{
	struct dns_table *t = dns_table_new(capacity);
	assert_non_null(t);
	return t;
}

#endif
