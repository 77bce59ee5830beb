/* test_image.c — policy images: a compiled image opens; truncated, corrupt or inconsistent ones are refused. */
#include "testutil.h"

#include <errno.h>

#include "policy/image_format.h"
#include "policy/netaddr.h"
#include "policy/regex.h"

static const char policy_yaml[] =
	"version: 1\n"
	"default: {exec: ask, read: allow, write: ask, connect: deny}\n"
	"ask_timeout: 30\n"
	"deny:\n"
	"  - command: rm\n    args: \"-rf *\"\n    reason: destructive\n"
	"  - command: \"/usr/bin/git\"\n    args: \"push.*--force.*\"\n    match: regex\n"
	"  - file: {path: \"*.env\", action: read}\n"
	"  - file: {path: \"~/.ssh/**\"}\n"
	"  - network: {destination: \"169.254.0.0/16\"}\n"
	"ask:\n"
	"  - command: \"py*\"\n"
	"  - file: {path: \"*.pem\"}\n"
	"  - network: {destination: \"*.example.com:443\"}\n"
	"allow:\n"
	"  - command: git\n    args: status\n    match: prefix\n"
	"  - file: {path: \"/tmp/**\"}\n"
	"  - network: {destination: \"api.anthropic.com:443\"}\n"
	"  - network: {destination: \"*:80\"}\n"
	"  - network: {destination: \"api-?.example.org\"}\n";

struct fixture {
	struct test_policy t;
	uint64_t *copy; /* owned; 8-aligned scratch copy of the image */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	test_policy_build(&f->t, policy_yaml);
	f->copy = malloc(f->t.size + 8);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	test_policy_free(&f->t);
	free(f->copy);
	free(f);
	return 0;
}

static size_t header_size(void)
{
	return (sizeof(struct pimg_header) + 7) & ~(size_t)7;
}

/* Fresh copy of the valid image. */
static struct pimg_header *fresh(struct fixture *f)
{
	memcpy(f->copy, f->t.blob, f->t.size);
	return (struct pimg_header *)f->copy;
}

/* Re-seals size and checksum so validation reaches past the header. */
static void reseal(struct fixture *f, size_t size)
{
	struct pimg_header *h = (struct pimg_header *)f->copy;
	h->size = (uint32_t)size;
	h->checksum = pimg_checksum((char *)f->copy + header_size(), size - header_size());
}

static int open_copy(struct fixture *f, size_t size)
{
	const struct policy_image *img;
	char msg[256];
	int r = policy_image_open(f->copy, size, &img, msg, sizeof msg);
	if (r == 0) {
		assert_ptr_equal(img, f->copy);
	} else {
		assert_null(img);
		assert_non_null(strstr(msg, "policy image"));
	}
	return r;
}

static void test_valid_image_opens(void **state)
{
	struct fixture *f = *state;
	fresh(f);
	assert_int_equal(open_copy(f, f->t.size), 0);
	assert_int_equal(policy_image_rule_count(f->t.img), 13);
	assert_int_equal(policy_image_ask_timeout(f->t.img), 30);
	assert_int_equal(policy_image_default(f->t.img, POLICY_ACTION_CONNECT), POLICY_DENY);
	assert_int_equal(policy_image_default(f->t.img, POLICY_ACTION_READ), POLICY_ALLOW);
	assert_int_equal(policy_image_default(f->t.img, POLICY_ACTION_MAX), POLICY_DENY);
	assert_int_equal(f->t.size % 8, 0);
}

static void test_null_and_misaligned(void **state)
{
	struct fixture *f = *state;
	const struct policy_image *img = (const void *)1;
	assert_int_equal(policy_image_open(NULL, 100, &img, NULL, 0), -EINVAL);
	assert_null(img);
	fresh(f);
	memmove((char *)f->copy + 4, f->copy, f->t.size);
	assert_int_equal(policy_image_open((char *)f->copy + 4, f->t.size, &img, NULL, 0), -EINVAL);
}

static void test_every_truncation_refused(void **state)
{
	struct fixture *f = *state;
	for (size_t n = 0; n < f->t.size; n++) {
		fresh(f);
		assert_int_equal(open_copy(f, n), -EINVAL);
	}
	/* also when the header claims the shorter size (size and checksum resealed) */
	for (size_t n = header_size(); n < f->t.size; n += 8) {
		fresh(f);
		reseal(f, n);
		if (open_copy(f, n) == 0)
			fail_msg("image truncated to %zu of %zu bytes was accepted", n, f->t.size);
	}
}

static void test_header_checks(void **state)
{
	struct fixture *f = *state;
	struct pimg_header *h = fresh(f);
	h->magic[0] ^= 1;
	assert_int_equal(open_copy(f, f->t.size), -EINVAL);

	h = fresh(f);
	h->version++;
	assert_int_equal(open_copy(f, f->t.size), -ENOTSUP);

	h = fresh(f);
	((char *)f->copy)[f->t.size - 1] ^= 0x40;
	assert_int_equal(open_copy(f, f->t.size), -EINVAL); /* checksum */

	h = fresh(f);
	h->size += 8;
	assert_int_equal(open_copy(f, f->t.size), -EINVAL);
}

/* A corruption applied to a fresh copy, resealed, that validation must refuse. */
struct corruption {
	const char *what;
	void (*apply)(struct pimg_header *h, char *base);
};

static struct pimg_rule *rules_of(struct pimg_header *h, char *base)
{
	return (struct pimg_rule *)(base + h->sec[PIMG_SEC_RULES].offset);
}

static struct pimg_bucket *first_bucket(struct pimg_header *h, char *base, enum pimg_section s)
{
	struct pimg_bucket *t = (struct pimg_bucket *)(base + h->sec[s].offset);
	for (uint32_t i = 0; i < h->sec[s].count; i++)
		if (t[i].key != PIMG_NONE)
			return &t[i];
	fail_msg("section %d has no bucket", s);
	return NULL;
}

static void c_sec_offset_out(struct pimg_header *h, char *b) { (void)b; h->sec[PIMG_SEC_IDS].offset = h->size; h->sec[PIMG_SEC_IDS].count = 1; }
static void c_sec_offset_unaligned(struct pimg_header *h, char *b) { (void)b; h->sec[PIMG_SEC_RULES].offset += 4; }
static void c_sec_offset_in_header(struct pimg_header *h, char *b) { (void)b; h->sec[PIMG_SEC_STRINGS].offset = 0; }
static void c_sec_count_huge(struct pimg_header *h, char *b) { (void)b; h->sec[PIMG_SEC_RULES].count = 0xffffffffu; h->nrules = 0xffffffffu; }
static void c_nrules_mismatch(struct pimg_header *h, char *b) { (void)b; h->nrules++; }
static void c_default_range(struct pimg_header *h, char *b) { (void)b; h->defaults[2] = 7; }
static void c_source_range(struct pimg_header *h, char *b) { (void)b; h->source = h->sec[PIMG_SEC_STRINGS].count; }
static void c_strings_unterminated(struct pimg_header *h, char *b)
{
	b[h->sec[PIMG_SEC_STRINGS].offset + h->sec[PIMG_SEC_STRINGS].count - 1] = 'x';
}
static void c_rule_kind(struct pimg_header *h, char *b) { rules_of(h, b)[0].kind = 9; }
static void c_rule_list(struct pimg_header *h, char *b) { rules_of(h, b)[0].list = 3; }
static void c_rule_match(struct pimg_header *h, char *b) { rules_of(h, b)[0].match = 4; }
static void c_rule_text(struct pimg_header *h, char *b) { rules_of(h, b)[1].text = 0x7fffffffu; }
static void c_rule_reason(struct pimg_header *h, char *b) { rules_of(h, b)[0].reason = h->sec[PIMG_SEC_STRINGS].count; }
static void c_rule_args_matcher(struct pimg_header *h, char *b) { rules_of(h, b)[0].args_m = PIMG_M_MAX; }
static void c_rule_glob_ref(struct pimg_header *h, char *b) { rules_of(h, b)[0].args_ref = 0xfffffff0u; }
static void c_rule_regex_ref(struct pimg_header *h, char *b) { rules_of(h, b)[1].args_ref = h->sec[PIMG_SEC_PROGS].count; }
static void c_rule_regex_len(struct pimg_header *h, char *b) { rules_of(h, b)[1].args_len = h->sec[PIMG_SEC_PROGS].count + 1; }
static void c_rule_regex_prog(struct pimg_header *h, char *b)
{
	struct pimg_rule *r = &rules_of(h, b)[1];
	memset(b + h->sec[PIMG_SEC_PROGS].offset + r->args_ref, 0xff, r->args_len);
}
static void c_rule_actions(struct pimg_header *h, char *b) { rules_of(h, b)[2].actions = 0x80; }
static void c_rule_no_actions(struct pimg_header *h, char *b) { rules_of(h, b)[2].actions = 0; }
static void c_rule_family(struct pimg_header *h, char *b) { rules_of(h, b)[4].family = 5; }
static void c_rule_prefix(struct pimg_header *h, char *b) { rules_of(h, b)[4].prefix = 33; }
static void c_rule_host_kind(struct pimg_header *h, char *b) { rules_of(h, b)[4].host_kind = 9; }
static void c_bad_glob(struct pimg_header *h, char *b)
{
	struct pimg_rule *r = &rules_of(h, b)[0];
	strcpy(b + h->sec[PIMG_SEC_STRINGS].offset + r->args_ref, "["); /* "-rf *" has room */
}
static void c_bucket_ids(struct pimg_header *h, char *b) { first_bucket(h, b, PIMG_SEC_EXEC_NAME)->ids = h->sec[PIMG_SEC_IDS].count; }
static void c_bucket_nids(struct pimg_header *h, char *b) { first_bucket(h, b, PIMG_SEC_EXEC_NAME)->nids = 0xffffffffu; }
static void c_bucket_key(struct pimg_header *h, char *b) { first_bucket(h, b, PIMG_SEC_NET_NAME)->key = 0x7ffffff0u; }
static void c_table_not_pow2(struct pimg_header *h, char *b) { (void)b; h->sec[PIMG_SEC_EXEC_NAME].count = 3; }
static void c_table_full(struct pimg_header *h, char *b)
{
	struct pimg_bucket *t = (struct pimg_bucket *)(b + h->sec[PIMG_SEC_FILE_EXT].offset);
	struct pimg_bucket *used = first_bucket(h, b, PIMG_SEC_FILE_EXT);
	for (uint32_t i = 0; i < h->sec[PIMG_SEC_FILE_EXT].count; i++)
		t[i] = *used;
}
static void c_id_range(struct pimg_header *h, char *b)
{
	uint32_t *ids = (uint32_t *)(b + h->sec[PIMG_SEC_IDS].offset);
	ids[0] = h->nrules;
}
static void c_id_wrong_kind(struct pimg_header *h, char *b)
{
	uint32_t *scan = (uint32_t *)(b + h->sec[PIMG_SEC_NET_ADDR].offset);
	scan[0] = 0; /* a command rule in a network index */
}
static void c_run_unsorted(struct pimg_header *h, char *b)
{
	uint32_t *scan = (uint32_t *)(b + h->sec[PIMG_SEC_NET_SCAN].offset);
	assert_int_equal(h->sec[PIMG_SEC_NET_SCAN].count, 2);
	uint32_t first = scan[0];
	scan[0] = scan[1];
	scan[1] = first;
}

static const struct corruption corruptions[] = {
	{ "section past the end", c_sec_offset_out },
	{ "section offset unaligned", c_sec_offset_unaligned },
	{ "section inside the header", c_sec_offset_in_header },
	{ "section count overflows", c_sec_count_huge },
	{ "rule count mismatch", c_nrules_mismatch },
	{ "default out of range", c_default_range },
	{ "source string out of range", c_source_range },
	{ "strings not NUL-terminated", c_strings_unterminated },
	{ "rule kind", c_rule_kind },
	{ "rule list", c_rule_list },
	{ "rule match", c_rule_match },
	{ "rule text offset", c_rule_text },
	{ "rule reason offset", c_rule_reason },
	{ "rule args matcher kind", c_rule_args_matcher },
	{ "rule glob string offset", c_rule_glob_ref },
	{ "rule regex offset", c_rule_regex_ref },
	{ "rule regex length", c_rule_regex_len },
	{ "rule regex program bytes", c_rule_regex_prog },
	{ "rule actions", c_rule_actions },
	{ "rule without actions", c_rule_no_actions },
	{ "rule address family", c_rule_family },
	{ "rule prefix length", c_rule_prefix },
	{ "rule host kind", c_rule_host_kind },
	{ "bucket ids out of range", c_bucket_ids },
	{ "bucket id count overflows", c_bucket_nids },
	{ "bucket key offset", c_bucket_key },
	{ "table size not a power of two", c_table_not_pow2 },
	{ "table without an empty slot", c_table_full },
	{ "rule id out of range", c_id_range },
	{ "rule of the wrong kind in an index", c_id_wrong_kind },
	{ "index run not sorted", c_run_unsorted },
};

static void test_structural_corruptions_refused(void **state)
{
	struct fixture *f = *state;
	for (size_t i = 0; i < sizeof corruptions / sizeof corruptions[0]; i++) {
		struct pimg_header *h = fresh(f);
		corruptions[i].apply(h, (char *)f->copy);
		reseal(f, f->t.size);
		if (open_copy(f, f->t.size) != -EINVAL)
			fail_msg("corruption not refused: %s", corruptions[i].what);
	}
}

/*
 * Corruption, and what is guaranteed about it.
 *
 * The checksum covers every byte after the header.  Each step of a lane,
 * h' = rotl((h ^ w) * K, 29) with K odd, is a bijection of h for a fixed word
 * w and of w for a fixed h; the final fold is a bijection of each lane given
 * the others.  So any change confined to one 64-bit word, whatever its bits,
 * changes the checksum: every such corruption is refused, with no exception
 * (test_checksum_refuses_every_word_flip).
 *
 * Resealed (checksum recomputed), a corruption reaches the validator, which
 * checks structure, not content: it refuses exactly the images that break a
 * rule of the format (image_format.h) — an offset or id out of range, a value
 * out of its enum, a run out of order or of the wrong kind, a bad regex
 * program, strings not NUL-terminated — and accepts the rest, in which every
 * reference is in bounds.  The model below states those rules again,
 * independently; each flip's outcome must be the model's.  Benign by
 * design: bytes the validator never reads (padding, line and column, flags,
 * ports and addresses, hashes, string contents) — such a flip is accepted
 * and may change a decision, which only the checksum would have caught.
 */

struct model {
	const uint8_t *b;
	const struct pimg_header *h;
};

static const void *msec(const struct model *m, enum pimg_section s)
{
	return m->b + m->h->sec[s].offset;
}

static const struct pimg_rule *mrule(const struct model *m, uint32_t id)
{
	return (const struct pimg_rule *)msec(m, PIMG_SEC_RULES) + id;
}

static bool mstr(const struct model *m, uint32_t off)
{
	return off < m->h->sec[PIMG_SEC_STRINGS].count;
}

static bool mmatcher(const struct model *m, uint8_t k, uint32_t ref, uint32_t len)
{
	uint32_t nprog = m->h->sec[PIMG_SEC_PROGS].count;
	switch (k) {
	case PIMG_M_ANY:
	case PIMG_M_KEY:
		return true;
	case PIMG_M_GLOB:
	case PIMG_M_COMP:
	case PIMG_M_EXACT:
	case PIMG_M_PREFIX:
		return mstr(m, ref);
	case PIMG_M_REGEX:
		return ref <= nprog && len <= nprog - ref &&
		       regex_validate((const uint8_t *)msec(m, PIMG_SEC_PROGS) + ref, len) == 0;
	default:
		return false;
	}
}

static bool mrule_ok(const struct model *m, const struct pimg_rule *r)
{
	if (r->kind >= POLICY_RULE_KIND_MAX || r->list >= POLICY_LIST_MAX ||
	    r->match >= POLICY_MATCH_MAX || (r->actions & ~POLICY_FILE_ALL) || !mstr(m, r->text) ||
	    (r->args_text != PIMG_NONE && !mstr(m, r->args_text)) ||
	    (r->reason != PIMG_NONE && !mstr(m, r->reason)))
		return false;
	if (r->kind == POLICY_RULE_COMMAND)
		return mmatcher(m, r->main_m, r->main_ref, r->main_len) &&
		       mmatcher(m, r->args_m, r->args_ref, r->args_len);
	if (r->kind == POLICY_RULE_FILE)
		return r->actions && mmatcher(m, r->main_m, r->main_ref, r->main_len);
	if (r->host_kind >= NETDEST_HOST_MAX)
		return false;
	if (r->host_kind == NETDEST_ADDR)
		return (r->family == 4 && r->prefix <= 32) || (r->family == 6 && r->prefix <= 128);
	return mmatcher(m, r->main_m, r->main_ref, r->main_len);
}

static bool mrun_ok(const struct model *m, const uint32_t *ids, uint32_t n, int kind)
{
	for (uint32_t i = 0; i < n; i++) {
		if (ids[i] >= m->h->nrules || mrule(m, ids[i])->kind != kind)
			return false;
		if (i && (mrule(m, ids[i - 1])->list > mrule(m, ids[i])->list ||
			  (mrule(m, ids[i - 1])->list == mrule(m, ids[i])->list && ids[i - 1] >= ids[i])))
			return false;
	}
	return true;
}

/* Whether the format's rules hold for the sections of the image at b (its header intact). */
static bool model_valid(const uint8_t *b)
{
	const struct model m = { b, (const struct pimg_header *)b };
	uint32_t nstr = m.h->sec[PIMG_SEC_STRINGS].count, nids = m.h->sec[PIMG_SEC_IDS].count;
	if (((const char *)msec(&m, PIMG_SEC_STRINGS))[nstr - 1] != '\0')
		return false;
	for (uint32_t i = 0; i < m.h->nrules; i++)
		if (!mrule_ok(&m, mrule(&m, i)))
			return false;
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		uint32_t n = m.h->sec[s].count, empty = 0;
		if (pimg_sections[s].kind < 0)
			continue;
		if (pimg_sections[s].entry == PIMG_E_ID) {
			if (!mrun_ok(&m, msec(&m, (enum pimg_section)s), n, pimg_sections[s].kind))
				return false;
			continue;
		}
		const struct pimg_bucket *t = msec(&m, (enum pimg_section)s);
		for (uint32_t i = 0; i < n; i++) {
			if (t[i].key == PIMG_NONE) {
				empty++;
				continue;
			}
			if (!mstr(&m, t[i].key) || t[i].ids > nids || t[i].nids > nids - t[i].ids ||
			    !mrun_ok(&m, (const uint32_t *)msec(&m, PIMG_SEC_IDS) + t[i].ids, t[i].nids,
				     pimg_sections[s].kind))
				return false;
		}
		if (n && !empty)
			return false;
	}
	return true;
}

/* What the byte at off is, by the format: "padding", "strings", "rule.kind", "bucket.hash", ... */
static const char *field_at(const struct fixture *f, size_t off)
{
	static const struct { size_t at, size; const char *name; } rule_fields[] = {
#define F(x, n) { offsetof(struct pimg_rule, x), sizeof(((struct pimg_rule *)0)->x), n }
		F(kind, "rule.kind"), F(list, "rule.list"), F(match, "rule.match"),
		F(actions, "rule.actions"), F(flags, "rule.flags"), F(main_m, "rule.main_m"),
		F(args_m, "rule.args_m"), F(host_kind, "rule.host_kind"), F(line, "rule.line"),
		F(column, "rule.column"), F(text, "rule.text"), F(args_text, "rule.args_text"),
		F(reason, "rule.reason"), F(main_ref, "rule.main_ref"), F(main_len, "rule.main_len"),
		F(args_ref, "rule.args_ref"), F(args_len, "rule.args_len"), F(port, "rule.port"),
		F(family, "rule.family"), F(prefix, "rule.prefix"), F(addr, "rule.addr"),
#undef F
	};
	static const char *const bucket_fields[4][2] = { { "bucket.hash", "empty bucket.hash" },
							 { "bucket.key", "empty bucket.key" },
							 { "bucket.ids", "empty bucket.ids" },
							 { "bucket.nids", "empty bucket.nids" } };
	const struct pimg_header *h = f->t.blob;
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		size_t at = h->sec[s].offset, len = h->sec[s].count * pimg_entry_size((enum pimg_section)s);
		if (off < at || off >= at + len)
			continue;
		size_t in = off - at;
		switch (pimg_sections[s].entry) {
		case PIMG_E_RULE:
			for (size_t i = 0; i < sizeof rule_fields / sizeof rule_fields[0]; i++)
				if (in % sizeof(struct pimg_rule) - rule_fields[i].at < rule_fields[i].size)
					return rule_fields[i].name;
			fail_msg("a byte of struct pimg_rule in no field: %zu", in % sizeof(struct pimg_rule));
			return NULL;
		case PIMG_E_BUCKET: {
			const struct pimg_bucket *b =
				(const struct pimg_bucket *)((const char *)f->t.blob + at) + in / 16;
			return bucket_fields[in % 16 / 4][b->key == PIMG_NONE];
		}
		case PIMG_E_BYTE:
			if (s == PIMG_SEC_STRINGS)
				return in == len - 1 ? "strings terminator" : "strings";
			return "progs";
		default:
			return pimg_sections[s].name;
		}
	}
	return "padding";
}

/* Decisions on an accepted image: in range, every rule describable (ASan watches the reads). */
static void decide_in_range(const struct policy_image *img)
{
	static const char *const paths[] = { "/home/u/.ssh/id_rsa", "/work/ws/.env", "/tmp/a/b",
					     "/x/key.pem" };
	const char *argv[] = { "git", "push", "--force", NULL };
	uint32_t n = policy_image_rule_count(img);
	struct policy_verdict v[8];
	size_t k = 0;
	struct policy_rule_info info;
	for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++)
		v[k++] = policy_decide_open(img, paths[p], POLICY_FILE_READ);
	v[k++] = policy_decide_exec(img, "/usr/bin/git", argv);
	v[k++] = policy_decide_exec(img, "/usr/bin/python3", argv);
	v[k++] = policy_decide_connect(img, "a.example.com", 443);
	v[k++] = policy_decide_connect(img, "169.254.169.254", 80);
	for (size_t i = 0; i < k; i++) {
		assert_true(v[i].decision < POLICY_DECISION_MAX);
		assert_true(v[i].rule >= -1 && v[i].rule < (int32_t)n);
	}
	for (int32_t r = 0; r < (int32_t)n; r++)
		assert_int_equal(policy_rule_describe(img, r, &info), 0);
}

/* Opens the resealed copy, checks the outcome is the model's, and decides on it if accepted. */
static bool open_as_model_says(struct fixture *f, const char *what)
{
	const struct policy_image *img;
	reseal(f, f->t.size);
	bool want = model_valid((const uint8_t *)f->copy);
	int r = policy_image_open(f->copy, f->t.size, &img, NULL, 0);
	if ((r == 0) != want)
		fail_msg("%s: the image was %s, but the format says it is %s", what,
			 r == 0 ? "accepted" : "refused", want ? "valid" : "broken");
	if (r == 0)
		decide_in_range(img);
	return r == 0;
}

/* Per kind of byte: flips accepted and refused. */
struct tally {
	const char *field;
	unsigned accepted, refused;
};

static struct tally *tally_of(struct tally *t, size_t *n, const char *field)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(t[i].field, field) == 0)
			return &t[i];
	t[*n] = (struct tally){ field, 0, 0 };
	return &t[(*n)++];
}

static unsigned tally_total(const struct tally *t, size_t n, const char *field, bool accepted)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].field, field) == 0)
			return accepted ? t[i].accepted : t[i].refused;
	fail_msg("no byte of the image is a %s", field);
	return 0;
}

/* Every single-bit flip of every byte after the header, resealed: refused exactly when the format says. */
static void test_single_flips_as_the_format_says(void **state)
{
	struct fixture *f = *state;
	struct tally t[64];
	size_t nt = 0, body = f->t.size - header_size();
	unsigned accepted = 0;
	for (size_t off = header_size(); off < f->t.size; off++) {
		struct tally *k = tally_of(t, &nt, field_at(f, off));
		for (int bit = 0; bit < 8; bit++) {
			char what[96];
			fresh(f);
			((uint8_t *)f->copy)[off] ^= (uint8_t)(1u << bit);
			snprintf(what, sizeof what, "bit %d of byte %zu (%s)", bit, off, k->field);
			bool ok = open_as_model_says(f, what);
			ok ? k->accepted++ : k->refused++;
			accepted += ok;
		}
	}
	for (size_t i = 0; i < nt; i++)
		print_message("  %-20s %5u accepted %5u refused\n", t[i].field, t[i].accepted,
			      t[i].refused);
	print_message("  %zu bytes, %zu flips: %u accepted, %zu refused\n", body, body * 8, accepted,
		      body * 8 - accepted);
	/* benign by design: bytes the validator never reads */
	static const char *const never_read[] = { "padding", "strings", "rule.line", "rule.column",
						  "rule.flags", "rule.port", "rule.addr",
						  "bucket.hash", "empty bucket.hash" };
	for (size_t i = 0; i < sizeof never_read / sizeof never_read[0]; i++)
		assert_int_equal(tally_total(t, nt, never_read[i], false), 0);
	/* never benign: the strings' last NUL, a rule's kind (out of range, or wrong for its index) */
	assert_int_equal(tally_total(t, nt, "strings terminator", true), 0);
	assert_int_equal(tally_total(t, nt, "rule.kind", true), 0);
	assert_true(tally_total(t, nt, "rule.kind", false) > 0);
}

/* Random flips of 1 to 4 bits anywhere after the header, resealed: the same, 3000 times. */
static void test_random_flips_as_the_format_says(void **state)
{
	struct fixture *f = *state;
	unsigned seed = 12345, refused = 0, accepted = 0;
	for (int round = 0; round < 3000; round++) {
		fresh(f);
		int flips = 1 + round % 4;
		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t off = header_size() + (seed >> 8) % (f->t.size - header_size());
			((uint8_t *)f->copy)[off] ^= (uint8_t)(1u << (seed % 8));
		}
		char what[32];
		snprintf(what, sizeof what, "round %d", round);
		open_as_model_says(f, what) ? accepted++ : refused++;
	}
	print_message("  3000 rounds: %u accepted, %u refused\n", accepted, refused);
	assert_int_equal(refused + accepted, 3000);
}

/* Not resealed: any change within one 64-bit word after the header is a checksum mismatch. */
static void test_checksum_refuses_every_word_flip(void **state)
{
	struct fixture *f = *state;
	unsigned seed = 777;
	char msg[256];
	const struct policy_image *img;
	for (size_t off = header_size(); off < f->t.size; off++)
		for (int bit = 0; bit < 8; bit++) {
			fresh(f);
			((uint8_t *)f->copy)[off] ^= (uint8_t)(1u << bit);
			if (policy_image_open(f->copy, f->t.size, &img, msg, sizeof msg) != -EINVAL ||
			    !strstr(msg, "checksum mismatch"))
				fail_msg("bit %d of byte %zu flipped: not refused by the checksum", bit,
					 off);
		}
	for (int round = 0; round < 3000; round++) {
		fresh(f);
		seed = seed * 1103515245u + 12345u;
		size_t word = header_size() / 8 + (seed >> 8) % ((f->t.size - header_size()) / 8);
		uint64_t mask = 0;
		for (int k = 0; k < 1 + round % 4 || !mask; k++) {
			seed = seed * 1103515245u + 12345u;
			mask ^= 1ull << (seed >> 10) % 64;
		}
		f->copy[word] ^= mask;
		assert_int_equal(policy_image_open(f->copy, f->t.size, &img, msg, sizeof msg), -EINVAL);
		assert_non_null(strstr(msg, "checksum mismatch"));
	}
}

/* A glob the compiler would never write is matched safely, not trusted to be well-formed. */
static void test_malformed_glob_is_harmless(void **state)
{
	struct fixture *f = *state;
	static const char *const globs[] = { "[", "\\", "a\\", "[[:nope:]]", "**x", "[z-a]", "***" };
	for (size_t i = 0; i < sizeof globs / sizeof globs[0]; i++) {
		struct pimg_header *h = fresh(f);
		c_bad_glob(h, (char *)f->copy);
		struct pimg_rule *r = &rules_of(h, (char *)f->copy)[0];
		strcpy((char *)f->copy + h->sec[PIMG_SEC_STRINGS].offset + r->args_ref, globs[i]);
		reseal(f, f->t.size);
		const struct policy_image *img;
		assert_int_equal(policy_image_open(f->copy, f->t.size, &img, NULL, 0), 0);
		const char *argv[] = { "rm", "-rf", "x", NULL };
		struct policy_verdict v = policy_decide_exec(img, "/bin/rm", argv);
		assert_true(v.decision < POLICY_DECISION_MAX);
	}
}

static void test_decisions_from_copy_match_original(void **state)
{
	struct fixture *f = *state;
	const struct policy_image *img;
	fresh(f);
	assert_int_equal(policy_image_open(f->copy, f->t.size, &img, NULL, 0), 0);
	struct policy_verdict a = policy_decide_open(img, "/home/u/.ssh/config", POLICY_FILE_READ);
	struct policy_verdict b = policy_decide_open(f->t.img, "/home/u/.ssh/config", POLICY_FILE_READ);
	assert_int_equal(a.decision, POLICY_DENY);
	assert_int_equal(a.rule, 3);
	assert_int_equal(b.rule, a.rule);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_image_opens),
		cmocka_unit_test(test_null_and_misaligned),
		cmocka_unit_test(test_every_truncation_refused),
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_structural_corruptions_refused),
		cmocka_unit_test(test_checksum_refuses_every_word_flip),
		cmocka_unit_test(test_single_flips_as_the_format_says),
		cmocka_unit_test(test_random_flips_as_the_format_says),
		cmocka_unit_test(test_malformed_glob_is_harmless),
		cmocka_unit_test(test_decisions_from_copy_match_original),
	};
	return cmocka_run_group_tests_name("policy image", tests, setup, teardown);
}
