/* fuzz_dns.c — libFuzzer target for proxy/dns.c: any answer must parse, echo the question and map back to its name. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

/* Small, so the fuzzer reaches a full table (SERVFAIL) and a fresh one again. */
#define FUZZ_CAPACITY 2048

static struct dns_table *table;

static unsigned rd16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Steps over an uncompressed name; returns its end, or 0. */
static size_t name_end(const uint8_t *m, size_t len, size_t p)
{
	while (p < len && m[p] != 0 && m[p] < 64)
		p += 1u + m[p];
	return p < len && m[p] == 0 ? p + 1 : 0;
}

/* Checks a response r (n bytes, no TCP prefix) to the query q (qn bytes). */
static void check_response(const uint8_t *q, size_t qn, const uint8_t *r, size_t n,
			   const struct dns_query_info *info)
{
	CHECK(n >= 12 && qn >= 12);
	CHECK(rd16(r) == rd16(q));
	unsigned flags = rd16(r + 2);
	CHECK(flags & 0x8000);
	CHECK((flags & 0x7800) == (rd16(q + 2) & 0x7800));
	if (info->rcode == DNS_RCODE_NOTIMP) {
		CHECK(n == 12 && (flags & 0xf) == DNS_RCODE_NOTIMP);
		return;
	}
	CHECK(rd16(r + 4) == 1 && rd16(r + 8) == 0);
	unsigned an = rd16(r + 6), ar = rd16(r + 10);
	CHECK(an <= 1 && ar <= 1);
	size_t qend = name_end(r, n, 12);
	CHECK(qend && qend + 4 <= n);
	qend += 4;
	/* The question, byte for byte. */
	CHECK(qend <= qn && memcmp(r + 12, q + 12, qend - 12) == 0);
	CHECK(rd16(r + qend - 2) == 1);
	size_t p = qend;
	if (an) {
		unsigned type = rd16(r + qend - 4);
		size_t rdlen = type == 1 ? 4 : 16;
		CHECK(type == 1 || type == 28);
		CHECK(p + 12 + rdlen <= n && rd16(r + p) == 0xc00c && rd16(r + p + 2) == type);
		CHECK(rd16(r + p + 4) == 1 && rd16(r + p + 10) == rdlen);
		const uint8_t *a = r + p + 12 + rdlen - 4;
		uint32_t ip = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
		CHECK(info->has_addr && ip == info->ipv4 && dns_is_fake(ip));
		const char *name = dns_table_name_of(table, ip);
		CHECK(name && strcmp(name, info->qname) == 0);
		p += 12 + rdlen;
	} else {
		CHECK(!info->has_addr);
	}
	if (ar) {
		CHECK(info->edns && p + 11 <= n && r[p] == 0 && rd16(r + p + 1) == 41);
		p += 11;
	}
	CHECK(p == n);
}

static void answer(const uint8_t *q, size_t qn, int tcp)
{
	static uint8_t out[DNS_TCP_FRAME_MAX];
	struct dns_query_info info;
	int n = dns_answer(table, q, qn, tcp, out, tcp ? sizeof out : DNS_UDP_MAX, &info);
	if (n == -EBADMSG) {
		CHECK(info.drop != DNS_DROP_NONE && info.rcode == -1);
		return;
	}
	CHECK(n > 0 && info.drop == DNS_DROP_NONE);
	if (tcp) {
		CHECK(n >= 2 && rd16(out) == (unsigned)n - 2);
		check_response(q, qn, out + 2, (size_t)n - 2, &info);
	} else {
		CHECK(n <= DNS_UDP_MAX);
		check_response(q, qn, out, (size_t)n, &info);
	}
}

/* The input as a text name: whatever dns_table_addr_of() accepts must come back lower-cased. */
static void name_roundtrip(const uint8_t *data, size_t size)
{
	char name[300], canon[300];
	uint32_t ip;
	if (size >= sizeof name)
		return;
	memcpy(name, data, size);
	name[size] = '\0';
	if (dns_table_addr_of(table, name, &ip) != 0)
		return;
	size_t len = strlen(name);
	if (len && name[len - 1] == '.')
		len--;
	for (size_t i = 0; i < len; i++)
		canon[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
	canon[len] = '\0';
	const char *back = dns_table_name_of(table, ip);
	CHECK(back && strcmp(back, canon) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!table)
		table = dns_table_new(FUZZ_CAPACITY);
	CHECK(table);
	answer(data, size, 0);
	answer(data, size, 1);
	/* The input as a TCP stream of length-prefixed messages. */
	const uint8_t *msg;
	size_t msglen, off = 0, used;
	while ((used = dns_tcp_next(data + off, size - off, &msg, &msglen)) > 0) {
		CHECK(used == msglen + 2 && used <= size - off && msg == data + off + 2);
		answer(msg, msglen, 1);
		off += used;
	}
	name_roundtrip(data, size);
	if (dns_table_count(table) >= FUZZ_CAPACITY) {
		dns_table_free(table);
		table = NULL;
	}
	return 0;
}
