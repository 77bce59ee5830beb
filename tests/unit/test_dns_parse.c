/* test_dns_parse.c — table-driven unit tests for proxy/dns.c's reading of a query: drops, header fields, EDNS0, truncation, TCP framing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns_wire.h"

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

/* A query for name (type qtype, class IN) with ar additional records still to put. */
static void edns_question(struct msg *q, unsigned id, const char *name, unsigned qtype, unsigned ar)
{
	header(q, id, RD, 1, 0, 0, ar);
	put_name(q, name);
	put16(q, qtype);
	put16(q, 1);
}

/* DO set, a 4096-byte payload: the answer carries OPT with our payload size and DO echoed. */
static void edns_dnssec_ok(struct dns_table *t)
{
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	edns_question(&q, 9, "edns.example", 1, 1);
	put_opt(&q, 4096, 0, true);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.an, 1);
	assert_true(r.opt);
	assert_int_equal(r.opt_udp, DNS_EDNS_UDP_SIZE);
	assert_int_equal(r.opt_version, 0);
	assert_int_equal(r.opt_ext_rcode, 0);
	assert_true(r.opt_do);
	assert_true(info.edns);
}

/* DO clear, a payload size below 512 (read as 512): a 112-byte answer is not truncated. */
static void edns_small_payload(struct dns_table *t)
{
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	edns_question(&q, 10, "a-rather-long-name-for-a-small-payload.edns.example.com", 28, 1);
	put_opt(&q, 100, 0, false);
	assert_int_equal(ask(t, &q, out, &r, &info), 112);
	assert_int_equal(r.an, 1);
	assert_false(info.truncated);
	assert_true(r.opt);
	assert_false(r.opt_do);
}

/* Version 1: BADVERS (16 = extended 1, header 0), no answer (RFC 6891 §6.1.3). */
static void edns_badvers(struct dns_table *t)
{
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	edns_question(&q, 11, "edns.example", 1, 1);
	put_opt(&q, 4096, 1, false);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_int_equal(r.flags & 0xf, 0);
	assert_int_equal(r.an, 0);
	assert_int_equal(r.opt_ext_rcode, 1);
	assert_int_equal(r.opt_version, 0);
	assert_int_equal(info.rcode, DNS_RCODE_BADVERS);
}

/* Another additional record (a TSIG-shaped one, its owner compressed) is ignored; OPT options too. */
static void edns_other_additional(struct dns_table *t)
{
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	edns_question(&q, 12, "edns.example", 1, 2);
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
}

/* Without OPT, a non-OPT additional record: no OPT back. */
static void edns_absent(struct dns_table *t)
{
	struct msg q;
	uint8_t out[512];
	struct resp r;
	struct dns_query_info info;

	edns_question(&q, 13, "edns.example", 1, 1);
	put_name(&q, "key");
	put16(&q, 250);
	put16(&q, 255);
	put16(&q, 0);
	put16(&q, 0);
	put16(&q, 0);
	assert_true(ask(t, &q, out, &r, &info) > 0);
	assert_false(r.opt);
	assert_int_equal(r.ar, 0);
}

static void test_edns(void **state)
{
	struct dns_table *t = table(0);

	(void)state;
	edns_dnssec_ok(t);
	edns_small_payload(t);
	edns_badvers(t);
	edns_other_additional(t);
	edns_absent(t);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_longest_name),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_notimp),
		cmocka_unit_test(test_edns),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_tcp_answer),
		cmocka_unit_test(test_tcp_frames),
		cmocka_unit_test(test_tcp_stream),
		cmocka_unit_test(test_drop_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
