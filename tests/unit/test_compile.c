/* test_compile.c — policy_compile()'s image read back byte by byte: the header, the sections' layout, each rule in its index, sorted runs, hash tables, sizes, the checksum. */
#include "testutil.h"

#include <errno.h>

#include "policy/image_format.h"
#include "policy/netaddr.h"

/* One rule of each form the compiler indexes differently; the comment is its id. */
static const char policy_yaml[] =
	"version: 1\n"
	"default: {exec: deny, read: ask, write: allow, connect: ask}\n"
	"ask_timeout: 42\n"
	"allow:\n"
	"  - command: git\n"                                        /* 0  exec_name "git" */
	"  - command: /usr/bin/make\n"                              /* 1  exec_path */
	"  - command: \"py*\"\n"                                    /* 2  exec_scan, glob */
	"  - command: \"c[a-z]+\"\n    match: regex\n"              /* 3  exec_scan, regex */
	"  - file: {path: \"/data/**\", action: read}\n"            /* 4  file_dir "/data" */
	"  - file: {path: .env}\n"                                  /* 5  file_comp ".env" */
	"  - file: {path: \"*.pem\"}\n"                             /* 6  file_ext "pem" */
	"  - file: {path: \"id_rsa*\"}\n"                           /* 7  file_cprefix "id_r" */
	"  - file: {path: \"ab*\"}\n"                               /* 8  file_cprefix "ab" */
	"  - file: {path: \"?x\"}\n"                                /* 9  file_scan */
	"  - file: {path: \"/etc/.*\", match: regex}\n"             /* 10 file_scan, regex */
	"  - file: {path: /etc/hosts, match: exact}\n"              /* 11 file_dir, exact */
	"  - file: {path: ./build, match: prefix}\n"                /* 12 file_dir "/work/ws/build" */
	"  - file: {path: \"~/.ssh/**\"}\n"                         /* 13 file_dir "/home/u/.ssh" */
	"  - network: {destination: \"api.example.com:443\"}\n"     /* 14 net_name */
	"  - network: {destination: \"*.example.org\"}\n"           /* 15 net_suffix */
	"  - network: {destination: \"*\"}\n"                       /* 16 net_scan, any */
	"  - network: {destination: \"api-?.example.net\"}\n"       /* 17 net_scan, glob */
	"  - network: {destination: \"10.0.0.0/8:22\"}\n"           /* 18 net_addr */
	"deny:\n"
	"  - command: git\n    args: \"push --force*\"\n"           /* 19 exec_name "git" */
	"  - file: {path: \"/data/secret/**\"}\n"                   /* 20 file_dir "/data/secret" */
	"ask:\n"
	"  - command: git\n    args: \"push *\"\n"                  /* 21 exec_name "git" */
	"  - command: \"py*\"\n    args: \"-c *\"\n";               /* 22 exec_scan */

#define NRULES 23

/* Where each rule must be found, and under which key (NULL for a scan). */
struct placement {
	enum pimg_section sec;
	const char *key;
	uint8_t main_m;
};

static const struct placement want[NRULES] = {
	{ PIMG_SEC_EXEC_NAME, "git", PIMG_M_KEY },
	{ PIMG_SEC_EXEC_PATH, "/usr/bin/make", PIMG_M_KEY },
	{ PIMG_SEC_EXEC_SCAN, NULL, PIMG_M_GLOB },
	{ PIMG_SEC_EXEC_SCAN, NULL, PIMG_M_REGEX },
	{ PIMG_SEC_FILE_DIR, "/data", PIMG_M_GLOB },
	{ PIMG_SEC_FILE_COMP, ".env", PIMG_M_KEY },
	{ PIMG_SEC_FILE_EXT, "pem", PIMG_M_COMP },
	{ PIMG_SEC_FILE_CPREFIX, "id_r", PIMG_M_COMP },
	{ PIMG_SEC_FILE_CPREFIX, "ab", PIMG_M_COMP },
	{ PIMG_SEC_FILE_SCAN, NULL, PIMG_M_GLOB },
	{ PIMG_SEC_FILE_SCAN, NULL, PIMG_M_REGEX },
	{ PIMG_SEC_FILE_DIR, "/etc/hosts", PIMG_M_EXACT },
	{ PIMG_SEC_FILE_DIR, "/work/ws/build", PIMG_M_KEY },
	{ PIMG_SEC_FILE_DIR, "/home/u/.ssh", PIMG_M_GLOB },
	{ PIMG_SEC_NET_NAME, "api.example.com", PIMG_M_KEY },
	{ PIMG_SEC_NET_SUFFIX, "example.org", PIMG_M_KEY },
	{ PIMG_SEC_NET_SCAN, NULL, PIMG_M_ANY },
	{ PIMG_SEC_NET_SCAN, NULL, PIMG_M_GLOB },
	{ PIMG_SEC_NET_ADDR, NULL, PIMG_M_ANY },
	{ PIMG_SEC_EXEC_NAME, "git", PIMG_M_KEY },
	{ PIMG_SEC_FILE_DIR, "/data/secret", PIMG_M_GLOB },
	{ PIMG_SEC_EXEC_NAME, "git", PIMG_M_KEY },
	{ PIMG_SEC_EXEC_SCAN, NULL, PIMG_M_GLOB },
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static const struct pimg_header *header(const struct test_policy *t)
{
	return t->blob;
}

static const void *section(const struct test_policy *t, enum pimg_section s)
{
	return (const char *)t->blob + header(t)->sec[s].offset;
}

static const char *string_at(const struct test_policy *t, uint32_t off)
{
	assert_true(off < header(t)->sec[PIMG_SEC_STRINGS].count);
	return (const char *)section(t, PIMG_SEC_STRINGS) + off;
}

static const struct pimg_rule *rule_at(const struct test_policy *t, uint32_t id)
{
	assert_true(id < header(t)->nrules);
	return (const struct pimg_rule *)section(t, PIMG_SEC_RULES) + id;
}

static int setup(void **state)
{
	struct test_policy *t = calloc(1, sizeof *t);
	test_policy_build(t, policy_yaml);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	test_policy_free(*state);
	free(*state);
	return 0;
}

/* The header: magic, version, size, rule count, the source name, defaults, ask_timeout, checksum. */
static void test_header(void **state)
{
	const struct test_policy *t = *state;
	const struct pimg_header *h = header(t);
	size_t hsize = align8(sizeof *h);
	assert_memory_equal(h->magic, PIMG_MAGIC, sizeof h->magic);
	assert_int_equal(h->version, PIMG_VERSION);
	assert_int_equal(h->size, t->size);
	assert_int_equal(t->size % 8, 0);
	assert_int_equal((uintptr_t)t->blob % 8, 0);
	assert_int_equal(h->nrules, NRULES);
	assert_int_equal(t->p->nrules, NRULES);
	assert_string_equal(string_at(t, h->source), "test.yaml");
	assert_int_equal(h->defaults[POLICY_ACTION_EXEC], POLICY_DENY);
	assert_int_equal(h->defaults[POLICY_ACTION_READ], POLICY_ASK);
	assert_int_equal(h->defaults[POLICY_ACTION_WRITE], POLICY_ALLOW);
	assert_int_equal(h->defaults[POLICY_ACTION_CONNECT], POLICY_ASK);
	assert_int_equal(h->ask_timeout, 42);
	assert_true(h->checksum == pimg_checksum((const char *)t->blob + hsize, t->size - hsize));
	/* the checksum covers the sections: one flipped bit there and it no longer matches */
	((char *)t->blob)[t->size - 1] ^= 1;
	assert_false(h->checksum == pimg_checksum((const char *)t->blob + hsize, t->size - hsize));
	((char *)t->blob)[t->size - 1] ^= 1;
}

/* The sections follow the header in enum order, 8-byte aligned, packed, the last ending the image. */
static void test_section_layout(void **state)
{
	const struct test_policy *t = *state;
	const struct pimg_header *h = header(t);
	size_t off = align8(sizeof *h);
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		size_t len = h->sec[s].count * pimg_entry_size((enum pimg_section)s);
		if (h->sec[s].offset != off)
			fail_msg("section %s at %u, expected %zu", pimg_sections[s].name,
				 h->sec[s].offset, off);
		/* what align8 adds between sections is zero */
		for (size_t i = off + len; i < off + align8(len); i++)
			assert_int_equal(((const uint8_t *)t->blob)[i], 0);
		off += align8(len);
	}
	assert_int_equal(off, t->size);
	assert_int_equal(h->sec[PIMG_SEC_RULES].count, NRULES);
	assert_int_equal(pimg_entry_size(PIMG_SEC_RULES), sizeof(struct pimg_rule));
	assert_int_equal(sizeof(struct pimg_rule) % 8, 0);
	assert_int_equal(sizeof(struct pimg_bucket) % 8, 0);
}

/* The strings: the source name first, every string NUL-terminated. */
static void test_strings(void **state)
{
	const struct test_policy *t = *state;
	const struct pimg_header *h = header(t);
	const char *str = section(t, PIMG_SEC_STRINGS);
	uint32_t n = h->sec[PIMG_SEC_STRINGS].count;
	assert_int_equal(h->source, 0);
	assert_true(n > 0);
	assert_int_equal(str[n - 1], '\0');
	for (uint32_t id = 0; id < NRULES; id++) {
		const struct pimg_rule *r = rule_at(t, id);
		const struct policy_rule *pr = &t->p->rules[id];
		const char *text = pr->kind == POLICY_RULE_COMMAND ? pr->command
				   : pr->kind == POLICY_RULE_FILE  ? pr->path
								   : pr->destination;
		assert_string_equal(string_at(t, r->text), text);
		if (pr->args)
			assert_string_equal(string_at(t, r->args_text), pr->args);
		else
			assert_int_equal(r->args_text, PIMG_NONE);
		assert_int_equal(r->reason, PIMG_NONE);
	}
}

/* Each rule as written: kind, list, match, position, actions, matcher. */
static void test_rules(void **state)
{
	const struct test_policy *t = *state;
	for (uint32_t id = 0; id < NRULES; id++) {
		const struct pimg_rule *r = rule_at(t, id);
		const struct policy_rule *pr = &t->p->rules[id];
		assert_int_equal(r->kind, pr->kind);
		assert_int_equal(r->list, pr->list);
		assert_int_equal(r->match, pr->match);
		assert_int_equal(r->line, pr->pos.line);
		assert_int_equal(r->column, pr->pos.column);
		if (r->main_m != want[id].main_m)
			fail_msg("rule %u: matcher %u, expected %u", id, r->main_m, want[id].main_m);
		if (pr->kind == POLICY_RULE_FILE)
			assert_int_equal(r->actions, pr->actions);
	}
	assert_int_equal(rule_at(t, 4)->actions, POLICY_FILE_READ);
	assert_int_equal(rule_at(t, 1)->flags & PIMG_R_FULLPATH, PIMG_R_FULLPATH);
	assert_int_equal(rule_at(t, 0)->flags & PIMG_R_FULLPATH, 0);
	assert_int_equal(rule_at(t, 19)->args_m, PIMG_M_GLOB);
	assert_int_equal(rule_at(t, 0)->args_m, PIMG_M_ANY);
	/* expanded paths: the matcher string is absolute */
	assert_string_equal(string_at(t, rule_at(t, 13)->main_ref), "/home/u/.ssh/**");
	assert_string_equal(string_at(t, rule_at(t, 12)->main_ref), "/work/ws/build");
	assert_string_equal(string_at(t, rule_at(t, 6)->main_ref), "*.pem");
	/* network: the port, and the address range */
	assert_int_equal(rule_at(t, 14)->port, 443);
	assert_int_equal(rule_at(t, 15)->port, 0);
	assert_int_equal(rule_at(t, 15)->host_kind, NETDEST_SUFFIX);
	assert_int_equal(rule_at(t, 16)->host_kind, NETDEST_ANY);
	const struct pimg_rule *addr = rule_at(t, 18);
	assert_int_equal(addr->host_kind, NETDEST_ADDR);
	assert_int_equal(addr->family, 4);
	assert_int_equal(addr->prefix, 8);
	assert_int_equal(addr->port, 22);
	assert_int_equal(addr->addr[0], 10);
	/* regex programs live in their own section, inside it */
	const struct pimg_header *h = header(t);
	for (uint32_t id = 3; id <= 10; id += 7) {
		const struct pimg_rule *r = rule_at(t, id);
		assert_true(r->main_len > 0);
		assert_true(r->main_ref + r->main_len <= h->sec[PIMG_SEC_PROGS].count);
	}
}

/* A run of rule ids: each of the section's kind, sorted by (list, id). */
static void check_run(const struct test_policy *t, enum pimg_section s, const uint32_t *ids,
		      uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct pimg_rule *r = rule_at(t, ids[i]);
		assert_int_equal(r->kind, pimg_sections[s].kind);
		if (i) {
			const struct pimg_rule *p = rule_at(t, ids[i - 1]);
			if (p->list > r->list || (p->list == r->list && ids[i - 1] >= ids[i]))
				fail_msg("%s: run not sorted at %u", pimg_sections[s].name, i);
		}
	}
}

/* Where rule `id` sits: the one index section holding it, and the key of its bucket. */
static int find_rule(const struct test_policy *t, uint32_t id, enum pimg_section *where,
		     const char **key)
{
	const struct pimg_header *h = header(t);
	const uint32_t *all = section(t, PIMG_SEC_IDS);
	int found = 0;
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		if (pimg_sections[s].kind < 0)
			continue;
		if (pimg_sections[s].entry == PIMG_E_ID) {
			const uint32_t *ids = section(t, (enum pimg_section)s);
			for (uint32_t i = 0; i < h->sec[s].count; i++)
				if (ids[i] == id) {
					found++;
					*where = (enum pimg_section)s;
					*key = NULL;
				}
			continue;
		}
		const struct pimg_bucket *b = section(t, (enum pimg_section)s);
		for (uint32_t i = 0; i < h->sec[s].count; i++)
			for (uint32_t k = 0; b[i].key != PIMG_NONE && k < b[i].nids; k++)
				if (all[b[i].ids + k] == id) {
					found++;
					*where = (enum pimg_section)s;
					*key = string_at(t, b[i].key);
				}
	}
	return found;
}

/* Every rule is in exactly the index its form calls for, under the key it calls for. */
static void test_each_rule_in_its_index(void **state)
{
	const struct test_policy *t = *state;
	for (uint32_t id = 0; id < NRULES; id++) {
		enum pimg_section s = PIMG_SEC_MAX;
		const char *key = NULL;
		int n = find_rule(t, id, &s, &key);
		if (n != 1)
			fail_msg("rule %u is in %d index entries, not 1", id, n);
		if (s != want[id].sec)
			fail_msg("rule %u is in %s, not %s", id, pimg_sections[s].name,
				 pimg_sections[want[id].sec].name);
		if (want[id].key)
			assert_string_equal(key, want[id].key);
		else
			assert_null(key);
	}
}

/* Hash tables: a power of two of buckets, at most half full, each key where a probe finds it. */
static void test_tables(void **state)
{
	const struct test_policy *t = *state;
	const struct pimg_header *h = header(t);
	const uint32_t *all = section(t, PIMG_SEC_IDS);
	uint32_t total_ids = 0;
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		if (pimg_sections[s].entry != PIMG_E_BUCKET)
			continue;
		const struct pimg_bucket *b = section(t, (enum pimg_section)s);
		uint32_t n = h->sec[s].count, keys = 0;
		assert_true(n > 0); /* this policy has a rule for every table */
		assert_int_equal(n & (n - 1), 0);
		for (uint32_t i = 0; i < n; i++) {
			if (b[i].key == PIMG_NONE)
				continue;
			const char *key = string_at(t, b[i].key);
			keys++;
			total_ids += b[i].nids;
			assert_true(b[i].nids > 0);
			assert_int_equal(b[i].hash, pimg_hash(key, strlen(key)));
			assert_true(pimg_filter_test(h->filter[s], b[i].hash));
			/* linear probing from the hash's slot reaches it before an empty slot */
			for (uint32_t j = b[i].hash & (n - 1); j != i; j = (j + 1) & (n - 1))
				assert_int_not_equal(b[j].key, PIMG_NONE);
			for (uint32_t j = 0; j < i; j++)
				if (b[j].key != PIMG_NONE)
					assert_string_not_equal(string_at(t, b[j].key), key);
			check_run(t, (enum pimg_section)s, all + b[i].ids, b[i].nids);
		}
		assert_true(n >= 2 * keys);
	}
	/* the ids section is exactly the buckets' runs */
	assert_int_equal(total_ids, h->sec[PIMG_SEC_IDS].count);
	/* scans are runs too */
	for (int s = 0; s < PIMG_SEC_MAX; s++)
		if (pimg_sections[s].kind >= 0 && pimg_sections[s].entry == PIMG_E_ID)
			check_run(t, (enum pimg_section)s, section(t, (enum pimg_section)s),
				  h->sec[s].count);
	/* the component-prefix index says which key lengths it holds: "ab" and "id_r" */
	assert_int_equal(h->cprefix_lens, (1u << 1) | (1u << 3));
}

/* A key shared across lists is one bucket whose run puts deny before ask before allow. */
static void test_sorted_run_across_lists(void **state)
{
	const struct test_policy *t = *state;
	const struct pimg_header *h = header(t);
	const struct pimg_bucket *b = section(t, PIMG_SEC_EXEC_NAME);
	const uint32_t *all = section(t, PIMG_SEC_IDS);
	for (uint32_t i = 0; i < h->sec[PIMG_SEC_EXEC_NAME].count; i++) {
		if (b[i].key == PIMG_NONE || strcmp(string_at(t, b[i].key), "git") != 0)
			continue;
		assert_int_equal(b[i].nids, 3);
		assert_int_equal(all[b[i].ids], 19); /* deny */
		assert_int_equal(all[b[i].ids + 1], 21); /* ask */
		assert_int_equal(all[b[i].ids + 2], 0); /* allow */
		return;
	}
	fail_msg("no bucket for git");
}

/* The exec scan: py* (ask, 22) before py* (allow, 2) and c[a-z]+ (allow, 3). */
static void test_scan_order(void **state)
{
	const struct test_policy *t = *state;
	const uint32_t *scan = section(t, PIMG_SEC_EXEC_SCAN);
	assert_int_equal(header(t)->sec[PIMG_SEC_EXEC_SCAN].count, 3);
	assert_int_equal(scan[0], 22);
	assert_int_equal(scan[1], 2);
	assert_int_equal(scan[2], 3);
}

/* The same policy compiles to the same bytes; the image opens and decides as the rules say. */
static void test_deterministic_and_decides(void **state)
{
	const struct test_policy *t = *state;
	struct policy_context ctx = { TEST_HOME, TEST_WORKSPACE };
	struct policy_error err;
	void *again = NULL;
	size_t size = 0;
	assert_int_equal(policy_compile(t->p, &ctx, &again, &size, &err), 0);
	assert_int_equal(size, t->size);
	assert_memory_equal(again, t->blob, size);
	free(again);
	const char *push[] = { "git", "push", "--force", NULL };
	assert_int_equal(policy_decide_exec(t->img, "/usr/bin/git", push).rule, 19);
	assert_int_equal(policy_decide_open(t->img, "/home/u/.ssh/id_rsa", POLICY_FILE_READ).rule,
			 7);
	assert_int_equal(policy_decide_open(t->img, "/data/secret/k", POLICY_FILE_READ).rule, 20);
	assert_int_equal(policy_decide_open(t->img, "/work/ws/.env", POLICY_FILE_WRITE).rule, 5);
	assert_int_equal(policy_decide_connect(t->img, "api.example.com", 443).rule, 14);
	/* "*" (16) comes before the address range (18) in the same list: the first rule wins */
	assert_int_equal(policy_decide_connect(t->img, "10.1.2.3", 22).rule, 16);
}

/* No rules: every index empty, the strings just the source name, the smallest image. */
static void test_empty_policy(void **state)
{
	struct test_policy t;
	(void)state;
	test_policy_build(&t, "version: 1\n");
	const struct pimg_header *h = header(&t);
	assert_int_equal(h->nrules, 0);
	for (int s = 0; s < PIMG_SEC_MAX; s++)
		if (s != PIMG_SEC_STRINGS)
			assert_int_equal(h->sec[s].count, 0);
	assert_int_equal(h->sec[PIMG_SEC_STRINGS].count, sizeof "test.yaml");
	assert_int_equal(t.size, align8(sizeof *h) + align8(sizeof "test.yaml"));
	assert_int_equal(h->cprefix_lens, 0);
	for (int s = 0; s < PIMG_SEC_MAX; s++)
		for (int w = 0; w < 4; w++)
			assert_true(h->filter[s][w] == 0);
	test_policy_free(&t);
}

/* Errors: a "~/" pattern with no home, a relative one with no workspace, file:line:column. */
static void test_compile_errors(void **state)
{
	struct policy_error err;
	struct policy_context none = { NULL, NULL };
	void *img = (void *)1;
	size_t size = 1;
	(void)state;
	static const char home_yaml[] = "version: 1\nallow:\n  - file: {path: \"~/x\"}\n";
	struct policy *p = policy_load_buffer("p.yaml", home_yaml, strlen(home_yaml), &err);
	assert_non_null(p);
	assert_int_equal(policy_compile(p, &none, &img, &size, &err), -EINVAL);
	assert_null(img);
	assert_int_equal(size, 0);
	assert_string_equal(err.file, "p.yaml");
	assert_int_equal(err.line, 3);
	assert_non_null(strstr(err.message, "home"));
	policy_free(p);

	static const char ws_yaml[] = "version: 1\nallow:\n  - file: {path: \"./x\"}\n";
	p = policy_load_buffer("p.yaml", ws_yaml, strlen(ws_yaml), &err);
	assert_non_null(p);
	assert_int_equal(policy_compile(p, &none, &img, &size, &err), -EINVAL);
	assert_non_null(strstr(err.message, "workspace"));
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_section_layout),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_each_rule_in_its_index),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_sorted_run_across_lists),
		cmocka_unit_test(test_scan_order),
		cmocka_unit_test(test_deterministic_and_decides),
		cmocka_unit_test(test_empty_policy),
		cmocka_unit_test(test_compile_errors),
	};
	return cmocka_run_group_tests_name("policy compile", tests, setup, teardown);
}
