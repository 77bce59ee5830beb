/* image_format.h — the on-disk layout of a compiled policy image (private to policy/). */
#ifndef AIRLOCK_POLICY_IMAGE_FORMAT_H
#define AIRLOCK_POLICY_IMAGE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/*
 * An image is one blob, native byte order, every structure 8-byte aligned:
 *
 *   struct pimg_header
 *   sections, each at header.sec[i].offset with header.sec[i].count entries
 *
 * Offsets are from the start of the image.  String references are offsets
 * into PIMG_SEC_STRINGS and name NUL-terminated strings; PIMG_NONE means
 * "absent".  Matcher programs (regex) live in PIMG_SEC_PROGS.
 *
 * Indexes: a hash table section holds pimg_bucket entries (a power of two of
 * them, open addressing, linear probing); each bucket names a key string and
 * a run of rule ids in PIMG_SEC_IDS.  A scan section is an array of rule ids.
 * Every run of ids is sorted by (list, id), so the first rule that matches in
 * a run is the best that run can give.
 */

#define PIMG_MAGIC "AIRLKIMG"
#define PIMG_VERSION 1u
#define PIMG_NONE 0xffffffffu

enum pimg_section {
	PIMG_SEC_RULES = 0,  /* struct pimg_rule[nrules] */
	PIMG_SEC_STRINGS,    /* char[] */
	PIMG_SEC_IDS,        /* uint32_t[]: runs of rule ids referenced by buckets */
	PIMG_SEC_PROGS,      /* uint8_t[]: regex programs */
	PIMG_SEC_EXEC_NAME,  /* buckets: command basename -> command rules */
	PIMG_SEC_EXEC_PATH,  /* buckets: command full path -> command rules */
	PIMG_SEC_EXEC_SCAN,  /* ids: command rules with a wildcard or regex command */
	PIMG_SEC_FILE_DIR,   /* buckets: leading literal components ("/home/u/.ssh") -> file rules */
	PIMG_SEC_FILE_COMP,  /* buckets: a component anywhere (".env") -> file rules */
	PIMG_SEC_FILE_EXT,   /* buckets: extension of a component anywhere ("pem") -> file rules */
	PIMG_SEC_FILE_CPREFIX, /* buckets: first PIMG_CPREFIX_MAX bytes of a component anywhere -> file rules */
	PIMG_SEC_FILE_SCAN,  /* ids: other file rules */
	PIMG_SEC_NET_NAME,   /* buckets: host name -> network rules */
	PIMG_SEC_NET_SUFFIX, /* buckets: domain of "*.domain" -> network rules */
	PIMG_SEC_NET_SCAN,   /* ids: "*" and other host globs */
	PIMG_SEC_NET_ADDR,   /* ids: IP literal and CIDR rules */
	PIMG_SEC_MAX
};

/* The shape of a section's entries. */
enum pimg_entry {
	PIMG_E_BYTE = 0, /* bytes (strings, programs) */
	PIMG_E_RULE,     /* struct pimg_rule */
	PIMG_E_ID,       /* uint32_t rule id */
	PIMG_E_BUCKET,   /* struct pimg_bucket: a hash table, a power of two of them */
};

/* What one section holds, as the compiler writes it and the validator checks it. */
struct pimg_section_info {
	const char *name;     /* for messages and tests */
	enum pimg_entry entry;
	int kind;             /* enum policy_rule_kind of every rule an index names; -1: not an index */
};

/*
 * One row per enum pimg_section, in its order.  An index (kind >= 0) is a
 * hash table (PIMG_E_BUCKET) whose buckets name runs in PIMG_SEC_IDS, or a
 * scan (PIMG_E_ID), itself one run.  PIMG_SEC_IDS is not an index of its
 * own: its runs are checked through the buckets that name them.
 */
static const struct pimg_section_info pimg_sections[PIMG_SEC_MAX] = {
	[PIMG_SEC_RULES] = { "rules", PIMG_E_RULE, -1 },
	[PIMG_SEC_STRINGS] = { "strings", PIMG_E_BYTE, -1 },
	[PIMG_SEC_IDS] = { "ids", PIMG_E_ID, -1 },
	[PIMG_SEC_PROGS] = { "progs", PIMG_E_BYTE, -1 },
	[PIMG_SEC_EXEC_NAME] = { "exec_name", PIMG_E_BUCKET, POLICY_RULE_COMMAND },
	[PIMG_SEC_EXEC_PATH] = { "exec_path", PIMG_E_BUCKET, POLICY_RULE_COMMAND },
	[PIMG_SEC_EXEC_SCAN] = { "exec_scan", PIMG_E_ID, POLICY_RULE_COMMAND },
	[PIMG_SEC_FILE_DIR] = { "file_dir", PIMG_E_BUCKET, POLICY_RULE_FILE },
	[PIMG_SEC_FILE_COMP] = { "file_comp", PIMG_E_BUCKET, POLICY_RULE_FILE },
	[PIMG_SEC_FILE_EXT] = { "file_ext", PIMG_E_BUCKET, POLICY_RULE_FILE },
	[PIMG_SEC_FILE_CPREFIX] = { "file_cprefix", PIMG_E_BUCKET, POLICY_RULE_FILE },
	[PIMG_SEC_FILE_SCAN] = { "file_scan", PIMG_E_ID, POLICY_RULE_FILE },
	[PIMG_SEC_NET_NAME] = { "net_name", PIMG_E_BUCKET, POLICY_RULE_NETWORK },
	[PIMG_SEC_NET_SUFFIX] = { "net_suffix", PIMG_E_BUCKET, POLICY_RULE_NETWORK },
	[PIMG_SEC_NET_SCAN] = { "net_scan", PIMG_E_ID, POLICY_RULE_NETWORK },
	[PIMG_SEC_NET_ADDR] = { "net_addr", PIMG_E_ID, POLICY_RULE_NETWORK },
};

struct pimg_section_desc {
	uint32_t offset;
	uint32_t count; /* entries (bytes for STRINGS and PROGS) */
};

struct pimg_header {
	char magic[8];
	uint32_t version;
	uint32_t size;     /* whole image, bytes, a multiple of 8 */
	uint64_t checksum; /* pimg_checksum() of bytes [sizeof header, size) */
	uint32_t nrules;
	uint32_t source;      /* string: the policy's file name */
	uint32_t ask_timeout; /* seconds */
	uint8_t defaults[4];  /* enum policy_decision per enum policy_action */
	uint8_t cprefix_lens; /* bit k-1 set: PIMG_SEC_FILE_CPREFIX holds keys of k bytes */
	uint8_t pad[7];
	struct pimg_section_desc sec[PIMG_SEC_MAX];
	/*
	 * Per hash table, a 256-bit Bloom filter of its keys' hashes (two bits
	 * per key, pimg_filter_bits()): most lookups miss, and a miss is then
	 * one test instead of a probe.
	 */
	uint64_t filter[PIMG_SEC_MAX][4];
};

/* The two filter bits (0..255) of a key hash; the table slot uses the low bits. */
static inline unsigned pimg_filter_bit1(uint32_t h)
{
	return (h >> 16) & 255u;
}

static inline unsigned pimg_filter_bit2(uint32_t h)
{
	return (h >> 24) & 255u;
}

static inline int pimg_filter_test(const uint64_t f[4], uint32_t h)
{
	unsigned a = pimg_filter_bit1(h), b = pimg_filter_bit2(h);
	return (f[a >> 6] >> (a & 63) & 1) && (f[b >> 6] >> (b & 63) & 1);
}

/* How a rule's main or args field is compared at decision time. */
enum pimg_matcher {
	PIMG_M_ANY = 0,    /* always matches (absent args) */
	PIMG_M_GLOB = 1,   /* string: glob, flavour by rule kind */
	PIMG_M_EXACT = 2,  /* string: byte-equal */
	PIMG_M_PREFIX = 3, /* string: equal, or followed by ' ' (args) / '/' (paths) */
	PIMG_M_REGEX = 4,  /* program in PIMG_SEC_PROGS */
	PIMG_M_KEY = 5,    /* the index key matched: nothing more to check */
	PIMG_M_COMP = 6,   /* string: a one-component glob, matched against the component the index found */
	PIMG_M_MAX
};

/* Longest literal component prefix PIMG_SEC_FILE_CPREFIX keys on ("id_rsa*" -> "id_r"). */
#define PIMG_CPREFIX_MAX 4

/* Rule flags. */
#define PIMG_R_FULLPATH 0x01u /* COMMAND: compare the full program path, not its basename */

struct pimg_rule {
	uint8_t kind;    /* enum policy_rule_kind */
	uint8_t list;    /* enum policy_list */
	uint8_t match;   /* enum policy_match as written */
	uint8_t actions; /* FILE: POLICY_FILE_* */
	uint8_t flags;   /* PIMG_R_* */
	uint8_t main_m;  /* enum pimg_matcher for command / path / host */
	uint8_t args_m;  /* enum pimg_matcher for args */
	uint8_t host_kind; /* NETWORK: enum netdest_host */
	uint32_t line, column;
	uint32_t text;      /* string: command / path / destination as written */
	uint32_t args_text; /* string or PIMG_NONE */
	uint32_t reason;    /* string or PIMG_NONE */
	uint32_t main_ref;  /* string or program offset, per main_m */
	uint32_t main_len;  /* program length (REGEX) */
	uint32_t args_ref;
	uint32_t args_len;
	uint16_t port;   /* NETWORK: 0 = any */
	uint8_t family;  /* NETWORK ADDR: 4 or 6 */
	uint8_t prefix;  /* NETWORK ADDR: bits */
	uint8_t addr[16];
};

struct pimg_bucket {
	uint32_t hash; /* pimg_hash() of the key */
	uint32_t key;  /* string, or PIMG_NONE for an empty slot */
	uint32_t ids;  /* first entry in PIMG_SEC_IDS */
	uint32_t nids;
};

/* Bytes per entry of section s: what its count counts. */
static inline size_t pimg_entry_size(enum pimg_section s)
{
	switch (pimg_sections[s].entry) {
	case PIMG_E_RULE:
		return sizeof(struct pimg_rule);
	case PIMG_E_ID:
		return sizeof(uint32_t);
	case PIMG_E_BUCKET:
		return sizeof(struct pimg_bucket);
	default:
		return 1;
	}
}

/* FNV-1a, 32 bits, over len bytes. */
static inline uint32_t pimg_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static inline uint32_t pimg_hash_step(uint32_t h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

#define PIMG_HASH_INIT 2166136261u

/*
 * Integrity checksum of len bytes (len a multiple of 8, p 8-byte aligned):
 * four independent 64-bit multiply-rotate lanes over words, folded at the
 * end, so the shim's constructor is not held up by one long dependency
 * chain.  Detects corruption, not tampering: the image lives on a read-only
 * mount the agent cannot write.
 */
static inline uint64_t pimg_mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0xff51afd7ed558ccdull;
	return (h << 29) | (h >> 35);
}

static inline uint64_t pimg_checksum(const void *p, size_t len)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t a = 0x9e3779b97f4a7c15ull ^ len, b = a + 1, c = a + 2, d = a + 3;
	size_t n = len / 8, i = 0;
	for (; i + 4 <= n; i += 4) {
		a = pimg_mix(a, w[i]);
		b = pimg_mix(b, w[i + 1]);
		c = pimg_mix(c, w[i + 2]);
		d = pimg_mix(d, w[i + 3]);
	}
	for (; i < n; i++)
		a = pimg_mix(a, w[i]);
	return pimg_mix(pimg_mix(pimg_mix(a, b), c), d);
}

#endif
