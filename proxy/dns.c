/* dns.c — the sandbox's DNS server logic: parse a query, hand out fake 198.18/15 addresses, build the answer. */
#include "proxy/dns.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/grow.h"

#define HDR_LEN 12
#define FLAG_QR 0x8000u
#define FLAG_AA 0x0400u
#define FLAG_TC 0x0200u
#define FLAG_RD 0x0100u
#define FLAG_RA 0x0080u
#define FLAG_CD 0x0010u
#define OPCODE_QUERY 0
#define OPT_DO 0x8000u
#define OPT_LEN 11          /* root name, type, class, TTL, RDLENGTH 0 */
#define NAME_PTR_TO_QNAME 0xc00cu /* a compression pointer to the question name (offset 12) */
#define WIRE_NAME_MAX 255

/* ---- the table --------------------------------------------------------------- */

/*
 * Names live in an array indexed by address offset (names[i] has the address
 * DNS_FAKE_NET + 1 + i), which makes the reverse lookup one index; an open
 * addressing hash (linear probing, load at most 1/2) indexes the same array by
 * name.  Both grow by doubling up to what capacity needs.
 */
struct dns_table {
	uint32_t capacity;  /* most names we will give addresses */
	uint32_t count;     /* names with addresses */
	uint32_t names_cap; /* allocated length of names and hashes */
	char **names;       /* owned, and each name owned */
	uint32_t *hashes;   /* owned; the hash of names[i], so growing never rehashes a string */
	uint32_t *slots;    /* owned; 0 = empty, else index into names + 1 */
	uint32_t nslots;    /* a power of two */
	uint64_t key[2];    /* SipHash key */
	struct dns_stats stats;
};

static const char *const drop_names[DNS_DROP_MAX] = {
	[DNS_DROP_NONE] = "none",
	[DNS_DROP_SHORT_HEADER] = "short-header",
	[DNS_DROP_RESPONSE] = "response",
	[DNS_DROP_QDCOUNT] = "qdcount",
	[DNS_DROP_SECTIONS] = "answer-or-authority",
	[DNS_DROP_TRUNCATED] = "truncated",
	[DNS_DROP_POINTER] = "compressed-question",
	[DNS_DROP_LABEL] = "bad-label",
	[DNS_DROP_NAME_LONG] = "name-too-long",
	[DNS_DROP_QCLASS] = "qclass",
	[DNS_DROP_OPT] = "bad-opt",
	[DNS_DROP_TRAILING] = "trailing-bytes",
};

const char *dns_drop_name(enum dns_drop reason)
{
	if ((unsigned)reason >= DNS_DROP_MAX || !drop_names[reason])
		return "?";
	return drop_names[reason];
}

static inline uint64_t rotl64(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl64(v[1], 13) ^ v[0];
	v[0] = rotl64(v[0], 32);
	v[2] += v[3];
	v[3] = rotl64(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl64(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl64(v[1], 17) ^ v[2];
	v[2] = rotl64(v[2], 32);
}

/* SipHash-2-4 (Aumasson, Bernstein 2012): names come from the sandbox, so the hash is keyed. */
static uint64_t siphash(const uint64_t key[2], const uint8_t *in, size_t len)
{
	uint64_t v[4] = { key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
			  key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull };
	uint64_t m, b = (uint64_t)len << 56;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		m = 0;
		for (int j = 7; j >= 0; j--)
			m = (m << 8) | in[i + (size_t)j];
		v[3] ^= m;
		sip_round(v);
		sip_round(v);
		v[0] ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v[3] ^= b;
	sip_round(v);
	sip_round(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

struct dns_table *dns_table_new(uint32_t capacity)
{
	struct dns_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	if (getentropy(t->key, sizeof t->key) != 0) {
		int e = errno;
		free(t);
		errno = e;
		return NULL;
	}
	t->capacity = capacity == 0 || capacity > DNS_FAKE_POOL_SIZE ? DNS_FAKE_POOL_SIZE : capacity;
	return t;
}

void dns_table_free(struct dns_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->count; i++)
		free(t->names[i]);
	free(t->names);
	free(t->hashes);
	free(t->slots);
	free(t);
}

uint32_t dns_table_count(const struct dns_table *t)
{
	return t->count;
}

bool dns_is_fake(uint32_t ipv4)
{
	/* Unsigned: an address below the pool wraps to a huge offset. */
	uint32_t off = ipv4 - DNS_FAKE_NET;
	return off >= 1 && off <= DNS_FAKE_POOL_SIZE;
}

const char *dns_table_name_of(const struct dns_table *t, uint32_t ipv4)
{
	if (!dns_is_fake(ipv4))
		return NULL;
	uint32_t i = ipv4 - DNS_FAKE_NET - 1;
	return i < t->count ? t->names[i] : NULL;
}

void dns_table_stats(const struct dns_table *t, struct dns_stats *out)
{
	*out = t->stats;
}

/* Finds name (canonical, len bytes) in the hash; returns its slot, which is empty when absent. */
static uint32_t find_slot(const struct dns_table *t, const char *name, size_t len, uint32_t h)
{
	uint32_t mask = t->nslots - 1;
	for (uint32_t s = h & mask;; s = (s + 1) & mask) {
		uint32_t e = t->slots[s];
		if (e == 0)
			return s;
		if (t->hashes[e - 1] == h && strncmp(t->names[e - 1], name, len) == 0 &&
		    t->names[e - 1][len] == '\0')
			return s;
	}
}

/* Doubles the hash (or makes the first one); every entry is re-placed by its kept hash. */
static int grow_slots(struct dns_table *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->count; i++) {
		uint32_t s = t->hashes[i] & (n - 1);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

/* Makes room for one more name in names and hashes (the same length, never past capacity). */
static int grow_names(struct dns_table *t)
{
	size_t n = t->names_cap;
	char **names = grow_array_max(t->names, &n, t->count + 1u, sizeof *names, 32, t->capacity);
	if (!names)
		return -ENOMEM;
	t->names = names;
	n = t->names_cap;
	uint32_t *hashes = grow_array_max(t->hashes, &n, t->count + 1u, sizeof *hashes, 32, t->capacity);
	if (!hashes)
		return -ENOMEM;
	t->hashes = hashes;
	t->names_cap = (uint32_t)n;
	return 0;
}

/*
 * Looks name (canonical) up, giving it the next address when new.  The hash
 * grows before an insertion would load it past 1/2, so a probe always meets an
 * empty slot.
 */
static int table_get(struct dns_table *t, const char *name, size_t len, uint32_t *ipv4_out)
{
	uint32_t h = (uint32_t)siphash(t->key, (const uint8_t *)name, len);
	if (t->nslots == 0 && grow_slots(t) != 0)
		return -ENOMEM;
	uint32_t s = find_slot(t, name, len, h);
	if (t->slots[s] != 0) {
		*ipv4_out = DNS_FAKE_NET + t->slots[s];
		return 0;
	}
	if (t->count >= t->capacity)
		return -ENOSPC;
	if ((uint64_t)(t->count + 1) * 2 > t->nslots) {
		if (grow_slots(t) != 0)
			return -ENOMEM;
		s = find_slot(t, name, len, h);
	}
	if (t->count == t->names_cap && grow_names(t) != 0)
		return -ENOMEM;
	char *copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	t->names[t->count] = copy;
	t->hashes[t->count] = h;
	t->slots[s] = ++t->count;
	*ipv4_out = DNS_FAKE_NET + t->count;
	return 0;
}

/* True for a character a label may hold here: printable ASCII but '\\' ('.' only as a separator). */
static bool name_char_ok(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '\\';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Canonicalises a text name into out (DNS_NAME_MAX + 1 bytes); returns its length or -EINVAL. */
static int canon_text(const char *name, char *out)
{
	size_t len = strlen(name), label = 0;
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len > DNS_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (c == '.') {
			if (label == 0)
				return -EINVAL;
			label = 0;
		} else if (!name_char_ok((unsigned char)c) || ++label > DNS_LABEL_MAX) {
			return -EINVAL;
		}
		out[i] = lower(c);
	}
	if (label == 0)
		return -EINVAL;
	out[len] = '\0';
	return (int)len;
}

int dns_table_addr_of(struct dns_table *t, const char *name, uint32_t *ipv4_out)
{
	char canon[DNS_NAME_MAX + 1];
	int len = canon_text(name, canon);
	if (len < 0)
		return len;
	return table_get(t, canon, (size_t)len, ipv4_out);
}

/* ---- parsing a query --------------------------------------------------------- */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* What parse_query() learns; offsets index the message. */
struct query {
	uint16_t id, flags, qtype;
	size_t qstart, qend;  /* the question: name, type and class */
	char name[DNS_NAME_MAX + 1];
	bool name_read;       /* name holds the whole question name */
	bool name_ok;         /* every label byte passes name_char_ok() */
	bool edns;
	uint16_t udp_size;    /* the requestor's OPT payload size */
	uint8_t edns_version;
	bool edns_do;
};

/*
 * Reads the question name at *pos (uncompressed: a pointer could loop or point
 * anywhere, and a query has nothing to point back to).  Writes the text form,
 * lower-cased, with '?' for bytes name_char_ok() refuses.
 */
static enum dns_drop parse_qname(const uint8_t *m, size_t len, size_t *pos, struct query *q)
{
	size_t p = *pos, wire = 0, n = 0;
	q->name_ok = true;
	for (;;) {
		if (p >= len)
			return DNS_DROP_TRUNCATED;
		uint8_t c = m[p];
		if ((c & 0xc0) == 0xc0)
			return DNS_DROP_POINTER;
		if (c & 0xc0)
			return DNS_DROP_LABEL;
		if (c == 0)
			break;
		/* This label and the root octet that must still follow. */
		wire += 1u + c;
		if (wire + 1 > WIRE_NAME_MAX)
			return DNS_DROP_NAME_LONG;
		if (p + 1 + c > len)
			return DNS_DROP_TRUNCATED;
		if (n > 0)
			q->name[n++] = '.';
		for (size_t i = 0; i < c; i++) {
			unsigned char b = m[p + 1 + i];
			if (!name_char_ok(b) || b == '.') {
				q->name_ok = false;
				b = '?';
			}
			q->name[n++] = lower((char)b);
		}
		p += 1u + c;
	}
	q->name[n] = '\0';
	q->name_read = true;
	*pos = p + 1;
	return DNS_DROP_NONE;
}

/* Steps over a record's owner name without following pointers; sets *root for the root name. */
static enum dns_drop skip_name(const uint8_t *m, size_t len, size_t *pos, bool *root)
{
	size_t p = *pos, wire = 0;
	*root = p < len && m[p] == 0;
	for (;;) {
		if (p >= len)
			return DNS_DROP_TRUNCATED;
		uint8_t c = m[p];
		if ((c & 0xc0) == 0xc0) {
			if (p + 2 > len)
				return DNS_DROP_TRUNCATED;
			*pos = p + 2;
			return DNS_DROP_NONE;
		}
		if (c & 0xc0)
			return DNS_DROP_LABEL;
		wire += 1u + c;
		if (wire > WIRE_NAME_MAX)
			return DNS_DROP_NAME_LONG;
		if (c == 0) {
			*pos = p + 1;
			return DNS_DROP_NONE;
		}
		p += 1u + c;
	}
}

/* Reads one additional record; remembers the OPT pseudo-record (RFC 6891 §6.1.2). */
static enum dns_drop parse_additional(const uint8_t *m, size_t len, size_t *pos, struct query *q)
{
	bool root;
	enum dns_drop d = skip_name(m, len, pos, &root);
	if (d != DNS_DROP_NONE)
		return d;
	size_t p = *pos;
	if (p + 10 > len)
		return DNS_DROP_TRUNCATED;
	uint16_t type = get16(m + p), rdlen = get16(m + p + 8);
	if (p + 10 + rdlen > len)
		return DNS_DROP_TRUNCATED;
	if (type == DNS_TYPE_OPT) {
		if (!root || q->edns)
			return DNS_DROP_OPT;
		q->edns = true;
		q->udp_size = get16(m + p + 2);
		q->edns_version = m[p + 5];
		q->edns_do = (get16(m + p + 6) & OPT_DO) != 0;
	}
	*pos = p + 10 + rdlen;
	return DNS_DROP_NONE;
}

/* Parses a QUERY (header already checked) into q. */
static enum dns_drop parse_query(const uint8_t *m, size_t len, struct query *q)
{
	if (get16(m + 4) != 1)
		return DNS_DROP_QDCOUNT;
	if (get16(m + 6) != 0 || get16(m + 8) != 0)
		return DNS_DROP_SECTIONS;
	size_t pos = HDR_LEN;
	q->qstart = pos;
	enum dns_drop d = parse_qname(m, len, &pos, q);
	if (d != DNS_DROP_NONE)
		return d;
	if (pos + 4 > len)
		return DNS_DROP_TRUNCATED;
	q->qtype = get16(m + pos);
	if (get16(m + pos + 2) != DNS_CLASS_IN)
		return DNS_DROP_QCLASS;
	pos += 4;
	q->qend = pos;
	for (uint16_t i = 0, n = get16(m + 10); i < n; i++)
		if ((d = parse_additional(m, len, &pos, q)) != DNS_DROP_NONE)
			return d;
	return pos == len ? DNS_DROP_NONE : DNS_DROP_TRAILING;
}

/* ---- building the response --------------------------------------------------- */

/* The response being decided: its code, and its one answer if any. */
struct reply {
	int rcode;
	uint16_t atype; /* 0: no answer record */
	uint32_t ipv4;
};

/* Decides the answer to a parsed QUERY, consulting (and growing) the table. */
static void decide(struct dns_table *t, const struct query *q, struct reply *r, int *error)
{
	r->rcode = DNS_RCODE_NOERROR;
	r->atype = 0;
	if (q->edns && q->edns_version != 0) {
		r->rcode = DNS_RCODE_BADVERS;
		return;
	}
	if (!q->name_ok) {
		r->rcode = DNS_RCODE_NXDOMAIN;
		return;
	}
	if ((q->qtype != DNS_TYPE_A && q->qtype != DNS_TYPE_AAAA) || q->name[0] == '\0')
		return;
	int rc = table_get(t, q->name, strlen(q->name), &r->ipv4);
	if (rc != 0) {
		*error = rc;
		r->rcode = DNS_RCODE_SERVFAIL;
		return;
	}
	r->atype = q->qtype;
}

/* Writes the answer record: owner by pointer to the question, class IN, DNS_TTL. */
static size_t put_answer(uint8_t *p, const struct reply *r)
{
	put16(p, NAME_PTR_TO_QNAME);
	put16(p + 2, r->atype);
	put16(p + 4, DNS_CLASS_IN);
	put32(p + 6, DNS_TTL);
	if (r->atype == DNS_TYPE_A) {
		put16(p + 10, 4);
		put32(p + 12, r->ipv4);
		return 16;
	}
	/* ::ffff:a.b.c.d, RFC 4291 §2.5.5.2. */
	put16(p + 10, 16);
	memset(p + 12, 0, 10);
	p[22] = p[23] = 0xff;
	put32(p + 24, r->ipv4);
	return 28;
}

/* Writes our OPT record (RFC 6891 §6.1.2-3): extended RCODE in the TTL's top octet, version 0. */
static size_t put_opt(uint8_t *p, const struct query *q, int rcode)
{
	p[0] = 0;
	put16(p + 1, DNS_TYPE_OPT);
	put16(p + 3, DNS_EDNS_UDP_SIZE);
	p[5] = (uint8_t)(rcode >> 4);
	p[6] = 0;
	put16(p + 7, q->edns_do ? OPT_DO : 0);
	put16(p + 9, 0);
	return OPT_LEN;
}

/* The largest UDP response the requestor accepts (RFC 6891 §6.2.5: below 512 means 512). */
static size_t udp_limit(const struct query *q)
{
	if (!q->edns || q->udp_size <= DNS_UDP_MAX)
		return DNS_UDP_MAX;
	return q->udp_size < DNS_EDNS_UDP_SIZE ? q->udp_size : DNS_EDNS_UDP_SIZE;
}

static uint16_t reply_flags(uint16_t qflags, int rcode)
{
	return (uint16_t)(FLAG_QR | FLAG_AA | FLAG_RA | (qflags & (FLAG_RD | FLAG_CD)) | (rcode & 0xf));
}

/*
 * Lays out header, question copy, answer and OPT in out; room is what the
 * response may take.  Returns the length, or -ENOSPC / -EMSGSIZE (UDP: send
 * truncated) when it does not fit.
 */
static int build(const uint8_t *m, const struct query *q, const struct reply *r, bool may_trunc,
		 uint8_t *out, size_t room, bool *truncated)
{
	size_t qlen = q->qend - q->qstart;
	size_t ans = r->atype == DNS_TYPE_A ? 16 : r->atype == DNS_TYPE_AAAA ? 28 : 0;
	size_t opt = q->edns ? OPT_LEN : 0;
	size_t base = HDR_LEN + qlen + opt;
	if (base > room)
		return -ENOSPC;
	*truncated = base + ans > room;
	if (*truncated && !may_trunc)
		return -ENOSPC;
	if (*truncated)
		ans = 0;
	uint16_t flags = reply_flags(q->flags, r->rcode);
	put16(out, q->id);
	put16(out + 2, (uint16_t)(flags | (*truncated ? FLAG_TC : 0)));
	put16(out + 4, 1);
	put16(out + 6, ans ? 1 : 0);
	put16(out + 8, 0);
	put16(out + 10, q->edns ? 1 : 0);
	memcpy(out + HDR_LEN, m + q->qstart, qlen);
	size_t n = HDR_LEN + qlen;
	if (ans)
		n += put_answer(out + n, r);
	if (q->edns)
		n += put_opt(out + n, q, r->rcode);
	return (int)n;
}

/* NOTIMP for opcodes other than QUERY: the header alone, opcode and RD echoed. */
static int build_notimp(uint16_t id, uint16_t qflags, uint8_t *out, size_t room)
{
	if (room < HDR_LEN)
		return -ENOSPC;
	memset(out, 0, HDR_LEN);
	put16(out, id);
	put16(out + 2, (uint16_t)(FLAG_QR | (qflags & 0x7800u) | (qflags & FLAG_RD) | DNS_RCODE_NOTIMP));
	return HDR_LEN;
}

static void count_reply(struct dns_stats *s, const struct reply *r, bool truncated)
{
	s->answered++;
	s->truncated += truncated;
	switch (r->rcode) {
	case DNS_RCODE_NOERROR:
		if (r->atype)
			s->addresses++;
		else
			s->nodata++;
		break;
	case DNS_RCODE_NXDOMAIN:
		s->nxdomain++;
		break;
	case DNS_RCODE_SERVFAIL:
		s->servfail++;
		break;
	case DNS_RCODE_BADVERS:
		s->badvers++;
		break;
	default:
		break;
	}
}

/* Records a drop in the counters and in info. */
static int drop(struct dns_table *t, struct dns_query_info *info, enum dns_drop d)
{
	t->stats.dropped[d]++;
	info->drop = d;
	info->rcode = -1;
	return -EBADMSG;
}

/* Answers a message whose header is known to be a query. */
static int answer_query(struct dns_table *t, const uint8_t *m, size_t len, bool tcp, uint8_t *out,
			size_t room, struct dns_query_info *info)
{
	struct query q;
	memset(&q, 0, sizeof q);
	q.id = get16(m);
	q.flags = get16(m + 2);
	enum dns_drop d = parse_query(m, len, &q);
	info->qtype = q.qtype;
	if (q.name_read)
		memcpy(info->qname, q.name, sizeof q.name);
	if (d != DNS_DROP_NONE)
		return drop(t, info, d);
	struct reply r;
	decide(t, &q, &r, &info->error);
	size_t limit = tcp ? room : udp_limit(&q) < room ? udp_limit(&q) : room;
	int n = build(m, &q, &r, !tcp, out, limit, &info->truncated);
	if (n < 0)
		return n;
	count_reply(&t->stats, &r, info->truncated);
	info->rcode = r.rcode;
	info->edns = q.edns;
	info->has_addr = r.atype != 0 && !info->truncated;
	info->ipv4 = info->has_addr ? r.ipv4 : 0;
	return n;
}

int dns_answer(struct dns_table *t, const uint8_t *query, size_t len, bool tcp, uint8_t *out,
	       size_t cap, struct dns_query_info *info)
{
	struct dns_query_info scratch;
	if (!info)
		info = &scratch;
	memset(info, 0, sizeof *info);
	info->rcode = -1;
	t->stats.queries++;
	if (len < HDR_LEN)
		return drop(t, info, DNS_DROP_SHORT_HEADER);
	uint16_t flags = get16(query + 2);
	info->id = get16(query);
	info->opcode = (uint8_t)((flags >> 11) & 0xf);
	if (flags & FLAG_QR)
		return drop(t, info, DNS_DROP_RESPONSE);
	size_t skip = tcp ? 2 : 0;
	if (cap < skip)
		return -ENOSPC;
	size_t room = cap - skip < 65535 ? cap - skip : 65535;
	int n;
	if (info->opcode != OPCODE_QUERY) {
		n = build_notimp(info->id, flags, out + skip, room);
		if (n > 0) {
			t->stats.answered++;
			t->stats.notimp++;
			info->rcode = DNS_RCODE_NOTIMP;
		}
	} else {
		n = answer_query(t, query, len, tcp, out + skip, room, info);
	}
	if (n < 0)
		return n;
	if (tcp)
		put16(out, (uint16_t)n);
	return n + (int)skip;
}

size_t dns_tcp_next(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msglen)
{
	if (len < 2)
		return 0;
	size_t n = get16(buf);
	if (len - 2 < n)
		return 0;
	*msg = buf + 2;
	*msglen = n;
	return n + 2;
}
