/* sniff_tls.c — the egress proxy reads the server name from a TLS ClientHello (RFC 8446 §4.1.2, §5.1; RFC 6066 §3), fragments reassembled. */
#include "proxy/sniff.h"

#include <stdint.h>
#include <string.h>

#include "proxy/sniff_name.h"

/* A bounded forward reader over bytes known to be present. */
struct rd {
	const uint8_t *p;
	size_t n;
};

static bool rd_take(struct rd *r, size_t k, struct rd *sub)
{
	if (r->n < k)
		return false;
	sub->p = r->p;
	sub->n = k;
	r->p += k;
	r->n -= k;
	return true;
}

static bool rd_u8(struct rd *r, unsigned *v)
{
	struct rd b;
	if (!rd_take(r, 1, &b))
		return false;
	*v = b.p[0];
	return true;
}

static bool rd_u16(struct rd *r, unsigned *v)
{
	struct rd b;
	if (!rd_take(r, 2, &b))
		return false;
	*v = (unsigned)b.p[0] << 8 | b.p[1];
	return true;
}

/* A vector with a 1- or 2-byte length prefix (RFC 8446 §3.4). */
static bool rd_vec(struct rd *r, unsigned width, struct rd *sub)
{
	unsigned n;
	if (!(width == 1 ? rd_u8(r, &n) : rd_u16(r, &n)))
		return false;
	return rd_take(r, n, sub);
}

static enum sniff_result tls_bad(struct sniff_tls *out, const char *why)
{
	out->reason = why;
	return SNIFF_BAD;
}

/* ServerNameList holding exactly one host_name (RFC 6066 §3; OpenSSL requires one entry). */
static enum sniff_result parse_sni(struct rd ext, struct sniff_tls *out)
{
	struct rd list, name;
	unsigned type;
	if (!rd_vec(&ext, 2, &list) || ext.n != 0)
		return tls_bad(out, "server_name list length does not match its extension");
	if (!rd_u8(&list, &type) || !rd_vec(&list, 2, &name))
		return tls_bad(out, "truncated server_name entry");
	if (type != 0)
		return tls_bad(out, "server_name type other than host_name");
	if (list.n != 0)
		return tls_bad(out, "more than one server_name entry");
	const char *why = sniff_copy_name((const char *)name.p, name.n, out->host);
	return why ? tls_bad(out, why) : SNIFF_OK;
}

/* Extensions: unique server_name parsed; encrypted_client_hello noted (RFC 8446 §4.2). */
static enum sniff_result parse_extensions(struct rd exts, struct sniff_tls *out)
{
	enum sniff_result r = SNIFF_NONE;
	while (exts.n > 0) {
		unsigned type;
		struct rd data;
		if (!rd_u16(&exts, &type) || !rd_vec(&exts, 2, &data))
			return tls_bad(out, "extension overruns the extensions block");
		if (type == 0xfe0d)
			out->ech = true;
		if (type != 0)
			continue;
		if (r == SNIFF_OK)
			return tls_bad(out, "duplicate server_name extension");
		if ((r = parse_sni(data, out)) != SNIFF_OK)
			return r;
	}
	return r;
}

/* The ClientHello body (RFC 8446 §4.1.2; TLS 1.0-1.2 bodies share the layout, extensions optional). */
static enum sniff_result parse_hello(struct rd r, struct sniff_tls *out)
{
	struct rd skip, exts;
	unsigned v;
	if (!rd_u16(&r, &v) || !rd_take(&r, 32, &skip))
		return tls_bad(out, "truncated ClientHello");
	out->legacy_version = (uint16_t)v;
	if (v >> 8 != 3)
		return tls_bad(out, "ClientHello version is not 3.x");
	if (!rd_vec(&r, 1, &skip) || skip.n > 32)
		return tls_bad(out, "bad legacy_session_id");
	if (!rd_vec(&r, 2, &skip) || skip.n < 2 || skip.n % 2)
		return tls_bad(out, "bad cipher_suites");
	if (!rd_vec(&r, 1, &skip) || skip.n < 1)
		return tls_bad(out, "bad legacy_compression_methods");
	if (r.n == 0)
		return SNIFF_NONE; /* no extensions at all (TLS 1.2 and older) */
	if (!rd_vec(&r, 2, &exts) || r.n != 0)
		return tls_bad(out, "extensions length does not match the ClientHello");
	return parse_extensions(exts, out);
}

/* Where the handshake message's bytes lie in buf. */
struct frags {
	size_t off[SNIFF_TLS_RECORDS_MAX], n[SNIFF_TLS_RECORDS_MAX];
	unsigned count;
	size_t have; /* handshake bytes present */
	size_t want; /* 4 + ClientHello length, once known */
	uint8_t hdr[4];
};

/* Checks the record header at p (n bytes present, maybe fewer than 5) (RFC 8446 §5.1). */
static const char *record_header(const uint8_t *p, size_t n, bool first, size_t *rlen)
{
	if (p[0] != 22)
		return !first ? "record of another type inside the ClientHello" :
		       (p[0] & 0x80) ? "SSLv2 ClientHello is not supported" :
				       "not a TLS handshake";
	if (n >= 2 && p[1] != 3)
		return "bad TLS record version";
	if (n < 5)
		return NULL;
	*rlen = (size_t)p[3] << 8 | p[4];
	if (*rlen == 0)
		return "empty handshake record";
	if (*rlen > 16384)
		return "record longer than 2^14 bytes";
	return NULL;
}

/* Notes a record's payload (avail of its bytes present); reads the handshake header from it. */
static enum sniff_result add_fragment(struct frags *f, const uint8_t *buf, size_t off,
				      size_t avail, struct sniff_tls *out)
{
	if (f->count == SNIFF_TLS_RECORDS_MAX)
		return tls_bad(out, "ClientHello fragmented over too many records");
	f->off[f->count] = off;
	f->n[f->count++] = avail;
	for (size_t k = 0; f->have + k < 4 && k < avail; k++)
		f->hdr[f->have + k] = buf[off + k];
	f->have += avail;
	if (f->have >= 1 && f->hdr[0] != 1)
		return tls_bad(out, "first handshake message is not a ClientHello");
	if (f->want == 0 && f->have >= 4) {
		size_t len = (size_t)f->hdr[1] << 16 | (size_t)f->hdr[2] << 8 | f->hdr[3];
		if (len > SNIFF_TLS_HELLO_MAX) {
			out->reason = "ClientHello larger than 16 KiB";
			return SNIFF_TOO_LARGE;
		}
		f->want = 4 + len;
	}
	return SNIFF_OK;
}

/* Walks the records until the ClientHello is complete: OK, NEED_MORE, BAD, TOO_LARGE. */
static enum sniff_result gather(const uint8_t *buf, size_t len, struct frags *f,
				struct sniff_tls *out)
{
	size_t pos = 0, rlen = 0;
	for (;;) {
		if (pos >= len)
			return SNIFF_NEED_MORE;
		const char *why = record_header(buf + pos, len - pos, pos == 0, &rlen);
		if (why)
			return tls_bad(out, why);
		if (len - pos < 5)
			return SNIFF_NEED_MORE;
		size_t off = pos + 5, avail = len - off < rlen ? len - off : rlen;
		enum sniff_result r = add_fragment(f, buf, off, avail, out);
		if (r != SNIFF_OK)
			return r;
		if (f->want && f->have >= f->want) {
			f->n[f->count - 1] -= f->have - f->want;
			out->hello_end = off + f->n[f->count - 1];
			return SNIFF_OK;
		}
		if (avail < rlen)
			return SNIFF_NEED_MORE;
		pos = off + rlen;
	}
}

enum sniff_result sniff_tls(const uint8_t *buf, size_t len, struct sniff_tls *out)
{
	struct frags f;
	memset(out, 0, sizeof *out);
	memset(&f, 0, sizeof f);
	enum sniff_result r = gather(buf, len, &f, out);
	if (r != SNIFF_OK)
		return r;
	if (f.count == 1)
		return parse_hello((struct rd){ buf + f.off[0] + 4, f.want - 4 }, out);
	uint8_t msg[4 + SNIFF_TLS_HELLO_MAX];
	size_t at = 0;
	for (unsigned i = 0; i < f.count; i++) {
		memcpy(msg + at, buf + f.off[i], f.n[i]);
		at += f.n[i];
	}
	return parse_hello((struct rd){ msg + 4, f.want - 4 }, out);
}
