/* dns.h — the sandbox's DNS server logic: fake addresses from 198.18.0.0/15, one per name, never forwarded. */
#ifndef AIRLOCK_PROXY_DNS_H
#define AIRLOCK_PROXY_DNS_H

/*
 * The launcher answers every DNS query from inside the sandbox itself, with a
 * fake address, so no query ever leaves the machine and DNS cannot carry data
 * out.  It remembers name <-> address for the session, so a later connection to
 * a fake address maps back to the name the policy decides on.
 *
 * This module is pure: no sockets, no I/O, no clock.  The caller reads a
 * datagram (UDP) or a stream (TCP, framed with dns_tcp_next()), calls
 * dns_answer() and sends what it returns.  Not thread-safe: one table belongs
 * to one event loop.
 *
 * Addresses are IPv4 in host byte order throughout (198.18.0.1 is 0xc6120001).
 *
 * The pool is 198.18.0.0/15, reserved for benchmarking by RFC 2544 and listed
 * as such in RFC 5735 §3 (now RFC 6890): never a real destination, so a fake
 * address cannot shadow a host the agent might legitimately reach.  Its first
 * (198.18.0.0) and last (198.19.255.255) addresses are not handed out (network
 * and broadcast addresses of the /15), leaving DNS_FAKE_POOL_SIZE = 131070.
 * Names get addresses in order, 198.18.0.1 first.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_FAKE_NET 0xc6120000u /* 198.18.0.0 */
#define DNS_FAKE_MASK 0xfffe0000u /* /15 */
#define DNS_FAKE_POOL_SIZE 131070u /* 2^17 minus network and broadcast */

#define DNS_NAME_MAX 253     /* longest name in text form: a 255-octet wire name (RFC 1035 §2.3.4) */
#define DNS_LABEL_MAX 63     /* RFC 1035 §2.3.4 */
#define DNS_UDP_MAX 512      /* plain DNS over UDP (RFC 1035 §4.2.1) */
#define DNS_EDNS_UDP_SIZE 1232 /* the UDP payload size we advertise in OPT (DNS Flag Day 2020) */
#define DNS_TCP_FRAME_MAX 65537 /* 2-byte length prefix + the largest message (RFC 1035 §4.2.2) */
#define DNS_TTL 600          /* seconds; the table never forgets a name within a session */

/* Response codes (RFC 1035 §4.1.1; BADVERS is extended, RFC 6891 §9). */
enum dns_rcode {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
	DNS_RCODE_BADVERS = 16,
};

/* Record types we answer or recognise (RFC 1035 §3.2.2, RFC 3596 §2.1, RFC 6891 §6.1.1). */
enum dns_type {
	DNS_TYPE_A = 1,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_OPT = 41,
};

#define DNS_CLASS_IN 1

/*
 * Why a message was dropped (dns_answer() returned -EBADMSG).  A dropped query
 * gets no response at all: answering a message we cannot parse would mean
 * guessing where its question ends.
 */
enum dns_drop {
	DNS_DROP_NONE = 0,
	DNS_DROP_SHORT_HEADER, /* fewer than the 12 header octets (RFC 1035 §4.1.1) */
	DNS_DROP_RESPONSE,     /* QR=1: a response, not a query; answering responses invites loops */
	DNS_DROP_QDCOUNT,      /* QDCOUNT != 1: nobody implements several questions (RFC 9619) */
	DNS_DROP_SECTIONS,     /* a QUERY with answer or authority records */
	DNS_DROP_TRUNCATED,    /* the question or a record runs past the end of the message */
	DNS_DROP_POINTER,      /* a compression pointer in the question name (§4.1.4): could loop */
	DNS_DROP_LABEL,        /* a length octet 0x40..0xbf: label over 63 or a reserved label type */
	DNS_DROP_NAME_LONG,    /* a name over 255 octets in wire form (RFC 1035 §2.3.4) */
	DNS_DROP_QCLASS,       /* QCLASS other than IN */
	DNS_DROP_OPT,          /* an OPT record not owned by the root, or more than one (RFC 6891 §6.1.1) */
	DNS_DROP_TRAILING,     /* bytes after the last record the header counts */
	DNS_DROP_MAX
};

/* Counters since dns_table_new(); read with dns_table_stats(). */
struct dns_stats {
	uint64_t queries;   /* dns_answer() calls */
	uint64_t answered;  /* responses produced (every outcome below but drops and -ENOSPC) */
	uint64_t addresses; /* A or AAAA answers with a fake address */
	uint64_t nodata;    /* NOERROR without answers: other types, the root name */
	uint64_t nxdomain;  /* names refused for their bytes (see dns_table_addr_of) */
	uint64_t servfail;  /* the table was full (or out of memory) */
	uint64_t notimp;    /* opcodes other than QUERY */
	uint64_t badvers;   /* EDNS versions other than 0 */
	uint64_t truncated; /* UDP responses sent with TC=1 */
	uint64_t dropped[DNS_DROP_MAX]; /* per reason; [DNS_DROP_NONE] stays 0 */
};

/* What dns_answer() saw and did, for the caller's log line ("dns NAME -> 198.18.x.y"). */
struct dns_query_info {
	uint16_t id;          /* the query's ID */
	uint8_t opcode;       /* the query's opcode */
	uint16_t qtype;       /* the question's type; 0 when the question was not parsed */
	int rcode;            /* the response's enum dns_rcode; -1 when dropped */
	bool has_addr;        /* an A or AAAA answer carries ipv4 */
	bool truncated;       /* the UDP response was cut to the header and question, TC=1 */
	bool edns;            /* the query carried an OPT record, and so does the response */
	uint32_t ipv4;        /* the fake address (host order) when has_addr */
	int error;            /* -ENOSPC (table full) or -ENOMEM behind a SERVFAIL, else 0 */
	enum dns_drop drop;   /* why the message was dropped, else DNS_DROP_NONE */
	/* The question name, lower-cased, without the trailing dot ("" for the root,
	 * and when a drop came before the whole name was read); bytes a name may not
	 * hold (see dns_table_addr_of) are shown as '?'. */
	char qname[DNS_NAME_MAX + 1];
};

struct dns_table;

/*
 * Creates an empty table that hands out at most capacity addresses (names).
 * capacity 0 or over DNS_FAKE_POOL_SIZE means DNS_FAKE_POOL_SIZE.  Memory
 * grows with the names given out, up to about capacity × (name + 16) bytes.
 * The hash is SipHash keyed from getentropy(3), so names chosen inside the
 * sandbox cannot be made to collide.  Returns NULL with errno set (ENOMEM, or
 * getentropy's error).
 */
struct dns_table *dns_table_new(uint32_t capacity);

/* Frees t and every name in it.  Accepts NULL. */
void dns_table_free(struct dns_table *t);

/*
 * Gives the fake address of name, assigning the next free one on first sight.
 * name is text: case does not matter and one trailing '.' is ignored
 * (RFC 4343), so "Example.COM." and "example.com" share an address.  A name
 * is 1..253 characters of labels of 1..63 characters; beyond RFC 1035, every
 * character must be printable ASCII (0x21..0x7e) other than '\\' — raw bytes,
 * NULs, spaces, dots inside a label (wire "a.b" as one label) or controls
 * would read differently in the policy matcher, the audit log and the real
 * resolver than here.  Writes the address (host order) to *ipv4_out.  Returns
 * 0, -EINVAL for a name that breaks those rules, -ENOSPC when capacity names
 * have addresses, -ENOMEM.
 */
int dns_table_addr_of(struct dns_table *t, const char *name, uint32_t *ipv4_out);

/*
 * The name behind a fake address (host order), lower-cased, without a
 * trailing dot; NULL when ipv4 is not an address this table gave out.  The
 * string lives as long as t.
 */
const char *dns_table_name_of(const struct dns_table *t, uint32_t ipv4);

/* How many names have addresses. */
uint32_t dns_table_count(const struct dns_table *t);

/* True when ipv4 (host order) is in the pool: in 198.18.0.0/15, not its first or last address. */
bool dns_is_fake(uint32_t ipv4);

/*
 * Copies t's counters into *out.
 */
void dns_table_stats(const struct dns_table *t, struct dns_stats *out);

/* A short, stable name for a drop reason ("short-header", ...) for logs; "?" when out of range. */
const char *dns_drop_name(enum dns_drop reason);

/*
 * Answers one DNS message (RFC 1035 §4.1) of len bytes at query, writing the
 * response to out (cap bytes).
 *
 * tcp: false for a UDP datagram; true for a message taken from a TCP stream
 * by dns_tcp_next() (without its length prefix) — the response then starts
 * with its own 2-byte length prefix (RFC 1035 §4.2.2), ready to write.
 *
 * The response echoes the ID, the question exactly as sent (its case too, for
 * clients that check it, RFC 4343 §4.1), RD and CD; sets QR, AA (we are the
 * only authority the sandbox has) and RA.  Its answer, when there is one, owns
 * the question's name through a pointer to offset 12 and has TTL DNS_TTL:
 *   A     (RFC 1035 §3.4.1)  the name's fake address;
 *   AAAA  (RFC 3596 §2.2)    the same address IPv4-mapped, ::ffff:198.18.x.y.
 *         One table serves both families, and an AF_INET6 socket connecting
 *         to a mapped address makes an IPv4 connection, which lands on the
 *         IPv4 listeners with the fake address as its destination
 *         (ipv6(7)).  A socket with IPV6_V6ONLY cannot use it and falls back
 *         to the A answer, as dual-stack clients do.
 *   other types, and A/AAAA of the root name: NODATA (NOERROR, no answer, no
 *         SOA: nothing to cache, RFC 2308 §5).
 *   a name dns_table_addr_of() refuses: NXDOMAIN.
 *   the table full or out of memory: SERVFAIL, with info->error set — the
 *         client fails at once rather than after its timeouts.
 *   an opcode other than QUERY: NOTIMP with the header alone (RFC 1035
 *         §4.1.1); the rest of such a message is not parsed.
 *   EDNS (RFC 6891): a query with an OPT record gets one back advertising
 *         DNS_EDNS_UDP_SIZE, DO copied (RFC 3225 §3); a version other than 0
 *         gets BADVERS and no answer (§6.1.3).
 * Nothing is ever forwarded.
 *
 * Over UDP the response is at most 512 bytes, or the requestor's OPT payload
 * size capped at DNS_EDNS_UDP_SIZE, or cap; one that does not fit loses its
 * answer and gets TC=1 (§4.1.1; never happens with a 512-byte buffer: the
 * longest response is 12 + 259 + 28 + 11 = 310 bytes).
 *
 * Strictness: messages are dropped (-EBADMSG, counted per enum dns_drop) when
 * they are responses, lack a header, carry QDCOUNT != 1, answer or authority
 * records, a question name with a compression pointer, a reserved label type
 * or over 255 octets, a QCLASS other than IN, a malformed or second OPT, a
 * truncated record or bytes after the last record.  Additional records other
 * than OPT are checked for shape and ignored.
 *
 * info, when not NULL, is filled on every return (see struct dns_query_info).
 * Returns the response length (with the prefix under tcp); -EBADMSG: drop
 * the message, send nothing; -ENOSPC: cap cannot hold even the header and
 * question (a buffer of DNS_UDP_MAX bytes, +2 under tcp, always can).
 */
int dns_answer(struct dns_table *t, const uint8_t *query, size_t len, bool tcp, uint8_t *out,
	       size_t cap, struct dns_query_info *info);

/*
 * Framing for DNS over TCP (RFC 1035 §4.2.2, RFC 7766 §8): each message is
 * preceded by its length as 2 octets, network order.  Looks at the len bytes
 * received so far at buf: when they start with a complete message, points
 * *msg at it (after the prefix), sets *msglen and returns the bytes to consume
 * (2 + *msglen); returns 0 when more bytes are needed.  A zero-length message
 * consumes 2 bytes and yields *msglen = 0, which dns_answer() drops.  A
 * client may send several queries back to back (RFC 7766 §6.2.1.1): call
 * again after consuming.  A buffer of DNS_TCP_FRAME_MAX bytes holds any frame.
 */
size_t dns_tcp_next(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msglen);

#endif
