/* test_sniff_tls.c — table-driven unit tests for proxy/sniff*.c: the SNI in a TLS ClientHello built to order, whole, truncated, mutated and across records. */
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

#include "proxy/sniff.h"

#include "testutil.h"

/* ---- TLS ClientHello ------------------------------------------------------------- */

struct bld {
	uint8_t b[40000];
	size_t n;
};

static void put8(struct bld *b, unsigned v)
{
	assert_true(b->n < sizeof b->b);
	b->b[b->n++] = (uint8_t)v;
}

static void put16(struct bld *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v & 0xff);
}

static void put_bytes(struct bld *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof b->b);
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static size_t open16(struct bld *b)
{
	put16(b, 0);
	return b->n;
}

static void close16(struct bld *b, size_t at, int adjust)
{
	size_t len = (size_t)((int)(b->n - at) + adjust);
	b->b[at - 2] = (uint8_t)(len >> 8);
	b->b[at - 1] = (uint8_t)len;
}

enum corrupt {
	C_NONE,
	C_EXTS_LONG,   /* extensions block length one too long */
	C_EXTS_SHORT,  /* ... one too short */
	C_EXT_LONG,    /* an extension overruns the block */
	C_LIST_LONG,   /* ServerNameList length does not match the extension */
	C_LIST_SHORT,
	C_NAME_LONG,   /* HostName length overruns the list */
	C_TRAILING,    /* a byte after the extensions inside the ClientHello */
	C_HS_SHORT,    /* handshake length one less than the body */
	C_SID_33,      /* 33-byte session id */
	C_CIPHERS_ODD, /* odd cipher_suites length */
	C_CIPHERS_0,   /* no cipher suites */
	C_COMP_0,      /* no compression methods */
	C_VERSION_2,   /* legacy_version 2.0 */
	C_HS_TYPE_2,   /* ServerHello instead */
	C_REC_TYPE,    /* application_data record */
	C_REC_VERSION, /* record version 2.x */
	C_SSL2,        /* SSLv2 record header */
	C_LAST_TYPE,   /* second record is not a handshake */
};

struct hello {
	const char *sni;     /* NULL: no server_name */
	size_t sni_len;      /* 0: strlen(sni) */
	unsigned sni_type;
	bool two_names;
	bool dup_sni;
	bool sni_last;       /* after the other extensions */
	bool no_exts;        /* no extensions block at all */
	bool empty_exts;     /* an empty extensions block */
	bool ech;
	size_t padding;      /* a padding extension of this many bytes */
	size_t record_size;  /* fragment into records of this size (0: 16384) */
	enum corrupt corrupt;
};

static void put_sni(struct bld *b, const struct hello *h)
{
	size_t name_len = h->sni_len ? h->sni_len : strlen(h->sni);
	put16(b, 0);
	size_t ext = open16(b);
	size_t list = open16(b);
	for (int i = 0; i < (h->two_names ? 2 : 1); i++) {
		put8(b, h->sni_type);
		put16(b, (unsigned)name_len + (h->corrupt == C_NAME_LONG));
		put_bytes(b, h->sni, name_len);
	}
	close16(b, list, h->corrupt == C_LIST_LONG ? 1 : h->corrupt == C_LIST_SHORT ? -1 : 0);
	close16(b, ext, 0);
}

static void put_other_exts(struct bld *b, const struct hello *h)
{
	static const uint8_t groups[] = { 0, 4, 0, 0x1d, 0, 0x17 };
	put16(b, 10); /* supported_groups */
	size_t at = open16(b);
	put_bytes(b, groups, sizeof groups);
	close16(b, at, 0);
	put16(b, 0x17); /* extended_master_secret: empty */
	put16(b, 0);
	if (h->ech) {
		put16(b, 0xfe0d);
		at = open16(b);
		put_bytes(b, "\0\1\2\3", 4);
		close16(b, at, 0);
	}
	if (h->padding) {
		put16(b, 21);
		at = open16(b);
		for (size_t i = 0; i < h->padding; i++)
			put8(b, 0);
		close16(b, at, 0);
	}
}

static void put_body(struct bld *b, const struct hello *h)
{
	put16(b, h->corrupt == C_VERSION_2 ? 0x0200 : 0x0303);
	for (int i = 0; i < 32; i++)
		put8(b, (unsigned)i * 7);
	size_t sid = h->corrupt == C_SID_33 ? 33 : 32;
	put8(b, (unsigned)sid);
	for (size_t i = 0; i < sid; i++)
		put8(b, 0x55);
	size_t nc = h->corrupt == C_CIPHERS_0 ? 0 : h->corrupt == C_CIPHERS_ODD ? 5 : 6;
	put16(b, (unsigned)nc);
	for (size_t i = 0; i < nc; i++)
		put8(b, 0x13);
	put8(b, h->corrupt == C_COMP_0 ? 0 : 1);
	if (h->corrupt != C_COMP_0)
		put8(b, 0);
	if (h->no_exts)
		return;
	size_t exts = open16(b);
	if (!h->empty_exts) {
		if (h->sni && !h->sni_last)
			put_sni(b, h);
		put_other_exts(b, h);
		if (h->sni && (h->sni_last || h->dup_sni))
			put_sni(b, h);
		if (h->corrupt == C_EXT_LONG) {
			put16(b, 99);
			put16(b, 10);
			put8(b, 0);
		}
	}
	close16(b, exts, h->corrupt == C_EXTS_LONG ? 1 : h->corrupt == C_EXTS_SHORT ? -1 : 0);
	if (h->corrupt == C_TRAILING)
		put8(b, 0);
}

/* Builds the records carrying the ClientHello h. */
static void build_hello(struct bld *out, const struct hello *h)
{
	static struct bld body;
	body.n = 0;
	put_body(&body, h);
	size_t len = body.n - (h->corrupt == C_HS_SHORT);
	uint8_t hs[4] = { h->corrupt == C_HS_TYPE_2 ? 2 : 1, (uint8_t)(len >> 16),
			  (uint8_t)(len >> 8), (uint8_t)len };
	size_t total = 4 + body.n, size = h->record_size ? h->record_size : 16384;
	out->n = 0;
	for (size_t at = 0, rec = 0; at < total; at += size, rec++) {
		size_t n = total - at < size ? total - at : size;
		unsigned type = (h->corrupt == C_REC_TYPE && rec == 0) ||
						(h->corrupt == C_LAST_TYPE && rec == 1) ?
					23 :
					22;
		put8(out, h->corrupt == C_SSL2 ? 0x80 : type);
		put16(out, h->corrupt == C_REC_VERSION ? 0x0201 : 0x0301);
		put16(out, (unsigned)n);
		for (size_t i = at; i < at + n; i++)
			put8(out, i < 4 ? hs[i] : body.b[i - 4]);
	}
}

struct tls_row {
	struct hello h;
	enum sniff_result r;
	const char *want; /* OK: the name; BAD/TOO_LARGE: substring of the reason */
	int line;
};

#define T(r, want, ...) { { __VA_ARGS__ }, SNIFF_##r, want, __LINE__ }

static const struct tls_row tls_rows[] = {
	T(OK, "example.com", .sni = "example.com"),
	T(OK, "example.com", .sni = "Example.COM."),
	T(OK, "a.b.c.example.org", .sni = "a.b.c.example.org", .sni_last = true),
	T(OK, "x", .sni = "x", .ech = true),
	T(OK, "127.0.0.1", .sni = "127.0.0.1"),
	T(OK, "example.com", .sni = "example.com", .record_size = 100),
	T(OK, "example.com", .sni = "example.com", .record_size = 7),
	T(OK, "example.com", .sni = "example.com", .record_size = 3),
	T(OK, "big.example", .sni = "big.example", .padding = 16000),
	T(OK, "big.example", .sni = "big.example", .padding = 16000, .record_size = 8000),
	T(NONE, NULL, .sni = NULL),
	T(NONE, NULL, .sni = NULL, .ech = true),
	T(NONE, NULL, .no_exts = true),
	T(NONE, NULL, .empty_exts = true),
	T(NONE, NULL, .sni = NULL, .record_size = 50),
	T(TOO_LARGE, "larger than 16 KiB", .sni = "big.example", .padding = 16400),
	T(BAD, "duplicate server_name", .sni = "example.com", .dup_sni = true),
	T(BAD, "more than one", .sni = "example.com", .two_names = true),
	T(BAD, "type other than host_name", .sni = "example.com", .sni_type = 1),
	T(BAD, "empty host name", .sni = "", .sni_len = 0),
	T(BAD, "bad character", .sni = "a b.example"),
	T(BAD, "bad character", .sni = "a\0b", .sni_len = 3),
	T(BAD, "bad character", .sni = "[::1]"),
	T(BAD, "empty label", .sni = "a..example"),
	T(BAD, "longer than 253",
	  .sni = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	T(BAD, "label longer than 63",
	  .sni = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example"),
	T(BAD, "extensions length", .sni = "example.com", .corrupt = C_EXTS_LONG),
	T(BAD, "extensions length", .sni = "example.com", .corrupt = C_EXTS_SHORT),
	T(BAD, "overruns", .sni = "example.com", .corrupt = C_EXT_LONG),
	T(BAD, "does not match", .sni = "example.com", .corrupt = C_LIST_LONG),
	T(BAD, "does not match", .sni = "example.com", .corrupt = C_LIST_SHORT),
	T(BAD, "truncated server_name", .sni = "example.com", .corrupt = C_NAME_LONG),
	T(BAD, "extensions length", .sni = "example.com", .corrupt = C_TRAILING),
	T(BAD, "extensions length", .sni = "example.com", .corrupt = C_HS_SHORT),
	T(BAD, "session_id", .sni = "example.com", .corrupt = C_SID_33),
	T(BAD, "cipher_suites", .sni = "example.com", .corrupt = C_CIPHERS_ODD),
	T(BAD, "cipher_suites", .sni = "example.com", .corrupt = C_CIPHERS_0),
	T(BAD, "compression", .sni = "example.com", .corrupt = C_COMP_0),
	T(BAD, "version is not 3.x", .sni = "example.com", .corrupt = C_VERSION_2),
	T(BAD, "not a ClientHello", .sni = "example.com", .corrupt = C_HS_TYPE_2),
	T(BAD, "not a TLS handshake", .sni = "example.com", .corrupt = C_REC_TYPE),
	T(BAD, "record version", .sni = "example.com", .corrupt = C_REC_VERSION),
	T(BAD, "SSLv2", .sni = "example.com", .corrupt = C_SSL2),
	T(BAD, "another type", .sni = "example.com", .corrupt = C_LAST_TYPE, .record_size = 60),
	T(BAD, "too many records", .sni = "example.com", .record_size = 1),
};

static void check_tls(const struct tls_row *row, const uint8_t *buf, size_t len)
{
	struct sniff_tls t;
	uint8_t *b = exact_copy(buf, len);
	enum sniff_result r = sniff_tls(b, len, &t);
	free(b);
	if (r != row->r)
		fail_msg("line %d: result %s, expected %s (%s)", row->line, sniff_result_name(r),
			 sniff_result_name(row->r), t.reason ? t.reason : "");
	if (r == SNIFF_OK && strcmp(t.host, row->want) != 0)
		fail_msg("line %d: host '%s'", row->line, t.host);
	if (r == SNIFF_NONE)
		assert_string_equal(t.host, "");
	if ((r == SNIFF_BAD || r == SNIFF_TOO_LARGE) && !strstr(t.reason, row->want))
		fail_msg("line %d: reason '%s' lacks '%s'", row->line, t.reason, row->want);
	if (r == SNIFF_OK || r == SNIFF_NONE) {
		assert_int_equal(t.hello_end, len);
		assert_int_equal(t.legacy_version, 0x0303);
		assert_int_equal(t.ech, row->h.ech);
	}
}

static void test_tls_table(void **state)
{
	(void)state;
	static struct bld b;
	for (size_t i = 0; i < sizeof tls_rows / sizeof tls_rows[0]; i++) {
		build_hello(&b, &tls_rows[i].h);
		check_tls(&tls_rows[i], b.b, b.n);
	}
}

/* Every prefix: a complete ClientHello's prefixes are NEED_MORE; others NEED_MORE until a verdict. */
static void test_tls_truncated(void **state)
{
	(void)state;
	static struct bld b;
	for (size_t i = 0; i < sizeof tls_rows / sizeof tls_rows[0]; i++) {
		const struct tls_row *row = &tls_rows[i];
		build_hello(&b, &row->h);
		size_t step = b.n > 4000 ? 61 : 1;
		bool verdict = false;
		for (size_t k = 0; k < b.n; k += step) {
			struct sniff_tls t;
			uint8_t *p = exact_copy(b.b, k);
			enum sniff_result r = sniff_tls(p, k, &t);
			free(p);
			if (r == SNIFF_NEED_MORE && !verdict)
				continue;
			if (row->r == SNIFF_OK || row->r == SNIFF_NONE || r != row->r)
				fail_msg("line %d: prefix %zu gives %s (%s)", row->line, k,
					 sniff_result_name(r), t.reason ? t.reason : "");
			verdict = true;
		}
		check_tls(row, b.b, b.n);
	}
}

/* Extra bytes after the ClientHello (early data, the next record) change nothing. */
static void test_tls_trailing_data(void **state)
{
	(void)state;
	static struct bld b;
	struct hello h = { .sni = "example.com", .record_size = 90 };
	build_hello(&b, &h);
	size_t n = b.n;
	put_bytes(&b, "\x17\x03\x03\x00\x05hello", 10);
	struct sniff_tls t;
	assert_int_equal(sniff_tls(b.b, b.n, &t), SNIFF_OK);
	assert_int_equal(t.hello_end, n);
	assert_string_equal(t.host, "example.com");
}

/* Every single-byte mutation of a valid ClientHello: any verdict, never a read outside the buffer. */
static void test_tls_mutations(void **state)
{
	(void)state;
	static struct bld b;
	static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	struct hello hs[] = { { .sni = "example.com" }, { .sni = "example.com", .record_size = 40 } };
	size_t counts[SNIFF_RESULT_MAX] = { 0 };
	for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
		build_hello(&b, &hs[i]);
		for (size_t at = 0; at < b.n; at++) {
			uint8_t keep = b.b[at];
			for (size_t v = 0; v < sizeof values; v++) {
				struct sniff_tls t;
				b.b[at] = values[v];
				uint8_t *p = exact_copy(b.b, b.n);
				enum sniff_result r = sniff_tls(p, b.n, &t);
				free(p);
				assert_true(r < SNIFF_RESULT_MAX);
				counts[r]++;
				if (r == SNIFF_BAD)
					assert_non_null(t.reason);
			}
			b.b[at] = keep;
		}
	}
	assert_true(counts[SNIFF_BAD] > 0 && counts[SNIFF_OK] > 0 && counts[SNIFF_NEED_MORE] > 0);
}

static void test_tls_records(void **state)
{
	(void)state;
	struct sniff_tls t;
	static const uint8_t empty[] = { 22, 3, 1, 0, 0 };
	static const uint8_t huge[] = { 22, 3, 1, 0x40, 0x01 };
	static const uint8_t max[] = { 22, 3, 1, 0x40, 0x00, 1, 0, 0, 10 };
	static const uint8_t sslv2[] = { 0x80, 0x2e, 0x01, 0x03, 0x01 };
	assert_int_equal(sniff_tls(empty, sizeof empty, &t), SNIFF_BAD);
	assert_non_null(strstr(t.reason, "empty handshake record"));
	assert_int_equal(sniff_tls(huge, sizeof huge, &t), SNIFF_BAD);
	assert_non_null(strstr(t.reason, "longer than 2^14"));
	assert_int_equal(sniff_tls(max, sizeof max, &t), SNIFF_NEED_MORE);
	assert_int_equal(sniff_tls(sslv2, 1, &t), SNIFF_BAD);
	assert_int_equal(sniff_tls(NULL, 0, &t), SNIFF_NEED_MORE);
	assert_int_equal(sniff_tls((const uint8_t *)"GET / HTTP/1.1\r\n", 1, &t), SNIFF_BAD);
	assert_true(SNIFF_TLS_BUF_MAX > SNIFF_TLS_HELLO_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_table),
		cmocka_unit_test(test_tls_truncated),
		cmocka_unit_test(test_tls_trailing_data),
		cmocka_unit_test(test_tls_mutations),
		cmocka_unit_test(test_tls_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
