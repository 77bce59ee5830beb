/* fuzz_sniff.c — libFuzzer target for proxy/sniff*.c and proxy/addr.c: byte 0 picks the parser, byte 1 the chunk size; fed whole and in growing prefixes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/addr.h"
#include "proxy/sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Growing prefix lengths: at most 64 of them, the last one len. */
static size_t next_len(size_t k, size_t step, size_t len)
{
	if (step < len / 64)
		step = len / 64;
	return len - k < step ? len : k + step;
}

/* A prefix in a buffer of exactly its size, so ASan sees a read past its end. */
static void *prefix_copy(const uint8_t *p, size_t k)
{
	void *b = malloc(k ? k : 1);
	if (!b)
		abort();
	if (k)
		memcpy(b, p, k);
	return b;
}

static void check_http_ok(const char *buf, size_t len, const struct sniff_http *h)
{
	if (h->head_len > len || h->head_len > SNIFF_HTTP_HEAD_MAX || h->line_len > h->head_len ||
	    h->host[0] == '\0' || h->port == 0 || strlen(h->host) >= SNIFF_HOST_MAX)
		abort();
	static char out[SNIFF_HTTP_HEAD_MAX + 600];
	int n = sniff_http_rewrite(buf, h, out, sizeof out);
	if (h->kind != SNIFF_HTTP_ABSOLUTE) {
		if (n != -EINVAL)
			abort();
		return;
	}
	size_t rest = h->head_len - h->line_len;
	if (n < 0 || (size_t)n + rest > sizeof out)
		abort();
	memcpy(out + n, buf + h->line_len, rest);
	struct sniff_http o;
	enum sniff_result r = sniff_http(out, (size_t)n + rest, &o);
	if (r == SNIFF_OK ? o.kind != SNIFF_HTTP_ORIGIN || o.head_len != (size_t)n + rest :
			    !(r == SNIFF_TOO_LARGE && (size_t)n + rest > SNIFF_HTTP_HEAD_MAX))
		abort();
}

static void fuzz_http(const uint8_t *p, size_t len, size_t step)
{
	struct sniff_http whole, part;
	enum sniff_result w = sniff_http((const char *)p, len, &whole);
	if (w == SNIFF_OK)
		check_http_ok((const char *)p, len, &whole);
	if ((w == SNIFF_BAD) != (whole.reason != NULL && w != SNIFF_TOO_LARGE))
		abort();
	for (size_t k = 0; k < len; k = next_len(k, step, len)) {
		char *b = prefix_copy(p, k);
		enum sniff_result r = sniff_http(b, k, &part);
		free(b);
		/* A verdict on a prefix stands for the whole. */
		if (r != SNIFF_NEED_MORE && r != w)
			abort();
		if (r == SNIFF_OK && part.head_len != whole.head_len)
			abort();
	}
}

static void fuzz_socks(const uint8_t *p, size_t len, size_t step)
{
	struct sniff_socks whole, part;
	uint8_t sent_whole[16], sent_part[64];
	size_t nw, np = 0, k = 0;
	sniff_socks_init(&whole);
	enum sniff_result w = sniff_socks(&whole, p, len), r;
	nw = whole.reply_len;
	memcpy(sent_whole, whole.reply, nw);
	if (sniff_socks(&whole, p, len) != w || whole.reply_len != 0)
		abort();
	sniff_socks_init(&part);
	do {
		k = next_len(k, step, len);
		uint8_t *b = prefix_copy(p, k);
		r = sniff_socks(&part, b, k);
		free(b);
		if (np + part.reply_len > sizeof sent_part)
			abort();
		memcpy(sent_part + np, part.reply, part.reply_len);
		np += part.reply_len;
	} while (k < len);
	if (r != w || np != nw || memcmp(sent_part, sent_whole, nw) != 0)
		abort();
	if (w == SNIFF_OK && (whole.port == 0 || whole.consumed > len || whole.host[0] == '\0' ||
			      strcmp(whole.host, part.host) != 0 || whole.consumed != part.consumed))
		abort();
}

static void fuzz_tls(const uint8_t *p, size_t len, size_t step)
{
	struct sniff_tls whole, part;
	enum sniff_result w = sniff_tls(p, len, &whole);
	if (w == SNIFF_OK && (whole.host[0] == '\0' || whole.hello_end > len))
		abort();
	if (w == SNIFF_NONE && (whole.host[0] != '\0' || whole.hello_end > len))
		abort();
	for (size_t k = 0; k < len; k = next_len(k, step, len)) {
		uint8_t *b = prefix_copy(p, k);
		enum sniff_result r = sniff_tls(b, k, &part);
		free(b);
		if (r != SNIFF_NEED_MORE && r != w)
			abort();
	}
}

static void fuzz_addr(const uint8_t *p, size_t len)
{
	struct netaddr a, b, hosts[2];
	char text[ADDR_TEXT_MAX];
	char *s = prefix_copy(p, len);
	int rc = addr_parse(s, len, &a);
	free(s);
	if (rc != 0)
		return;
	int n = addr_format(&a, text, sizeof text);
	if (n <= 0 || addr_parse(text, (size_t)n, &b) != 0 || memcmp(&a, &b, sizeof a) != 0)
		abort();
	hosts[0] = a;
	memset(&hosts[1], 0, sizeof hosts[1]);
	enum addr_class c = addr_restricted(&a, NULL, 0);
	if (c >= ADDR_CLASS_MAX || addr_restricted(&a, hosts, 2) == ADDR_PUBLIC)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t step = (size_t)(data[1] % 16) + 1;
	const uint8_t *p = data + 2;
	size_t len = size - 2;
	switch (data[0] % 4) {
	case 0:
		fuzz_http(p, len, step);
		break;
	case 1:
		fuzz_socks(p, len, step);
		break;
	case 2:
		fuzz_tls(p, len, step);
		break;
	default:
		fuzz_addr(p, len);
		break;
	}
	return 0;
}
