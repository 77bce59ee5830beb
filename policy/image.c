/* image.c — validates a policy image and decides exec / open / connect against it, in place. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "policy/cli.h"
#include "policy/glob.h"
#include "policy/image_format.h"
#include "policy/netaddr.h"
#include "policy/policy.h"
#include "policy/regex.h"

#define JOIN_STACK 16384

struct policy_image {
	struct pimg_header h;
};

/* ---- access ---------------------------------------------------------------- */

static const void *sec_ptr(const struct policy_image *img, enum pimg_section s)
{
	return (const char *)img + img->h.sec[s].offset;
}

static const struct pimg_rule *rule_at(const struct policy_image *img, uint32_t id)
{
	return (const struct pimg_rule *)sec_ptr(img, PIMG_SEC_RULES) + id;
}

static const char *str_at(const struct policy_image *img, uint32_t off)
{
	return off == PIMG_NONE ? NULL : (const char *)sec_ptr(img, PIMG_SEC_STRINGS) + off;
}

static const uint8_t *prog_at(const struct policy_image *img, uint32_t off)
{
	return (const uint8_t *)sec_ptr(img, PIMG_SEC_PROGS) + off;
}

/* ---- validation ------------------------------------------------------------- */

static int bad(char *errbuf, size_t errlen, const char *what)
{
	if (errbuf && errlen)
		snprintf(errbuf, errlen, "corrupt policy image: %s", what);
	return -EINVAL;
}

static bool valid_str(const struct policy_image *img, uint32_t off)
{
	/* the strings section ends in NUL (checked first), so any in-range offset is terminated */
	return off < img->h.sec[PIMG_SEC_STRINGS].count;
}

static bool valid_opt_str(const struct policy_image *img, uint32_t off)
{
	return off == PIMG_NONE || valid_str(img, off);
}

static bool valid_matcher(const struct policy_image *img, uint8_t m, uint32_t ref, uint32_t len)
{
	switch (m) {
	case PIMG_M_ANY:
	case PIMG_M_KEY:
		return true;
	case PIMG_M_GLOB: /* glob_match() is safe on any string: no glob_check() here */
	case PIMG_M_COMP:
	case PIMG_M_EXACT:
	case PIMG_M_PREFIX:
		return valid_str(img, ref);
	case PIMG_M_REGEX:
		return ref <= img->h.sec[PIMG_SEC_PROGS].count &&
		       len <= img->h.sec[PIMG_SEC_PROGS].count - ref &&
		       regex_validate(prog_at(img, ref), len) == 0;
	default:
		return false;
	}
}

static bool valid_rule(const struct policy_image *img, const struct pimg_rule *r)
{
	if (r->kind >= POLICY_RULE_KIND_MAX || r->list >= POLICY_LIST_MAX ||
	    r->match >= POLICY_MATCH_MAX || (r->actions & ~POLICY_FILE_ALL) ||
	    !valid_str(img, r->text) || !valid_opt_str(img, r->args_text) ||
	    !valid_opt_str(img, r->reason))
		return false;
	switch (r->kind) {
	case POLICY_RULE_COMMAND:
		return valid_matcher(img, r->main_m, r->main_ref, r->main_len) &&
		       valid_matcher(img, r->args_m, r->args_ref, r->args_len);
	case POLICY_RULE_FILE:
		return r->actions != 0 &&
		       valid_matcher(img, r->main_m, r->main_ref, r->main_len);
	default:
		if (r->host_kind >= NETDEST_HOST_MAX)
			return false;
		if (r->host_kind == NETDEST_ADDR)
			return (r->family == 4 && r->prefix <= 32) ||
			       (r->family == 6 && r->prefix <= 128);
		return valid_matcher(img, r->main_m, r->main_ref, r->main_len);
	}
}

/* A run of ids: in range, of the section's rule kind, sorted by (list, id). */
static bool valid_run(const struct policy_image *img, const uint32_t *ids, uint32_t n, int kind)
{
	for (uint32_t i = 0; i < n; i++) {
		if (ids[i] >= img->h.nrules || rule_at(img, ids[i])->kind != kind)
			return false;
		if (i) {
			const struct pimg_rule *a = rule_at(img, ids[i - 1]), *b = rule_at(img, ids[i]);
			if (a->list > b->list || (a->list == b->list && ids[i - 1] >= ids[i]))
				return false;
		}
	}
	return true;
}

static bool valid_table(const struct policy_image *img, enum pimg_section s)
{
	const struct pimg_bucket *t = sec_ptr(img, s);
	uint32_t n = img->h.sec[s].count, nids = img->h.sec[PIMG_SEC_IDS].count, empty = 0;
	const uint32_t *ids = sec_ptr(img, PIMG_SEC_IDS);
	if (n & (n - 1))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (t[i].key == PIMG_NONE) {
			empty++;
			continue;
		}
		if (!valid_str(img, t[i].key) || t[i].ids > nids || t[i].nids > nids - t[i].ids ||
		    !valid_run(img, ids + t[i].ids, t[i].nids, pimg_sections[s].kind))
			return false;
	}
	return n == 0 || empty > 0;
}

int policy_image_open(const void *buf, size_t size, const struct policy_image **out, char *errbuf,
		      size_t errlen)
{
	const struct pimg_header *h = buf;
	size_t hsize = (sizeof *h + 7) & ~(size_t)7;
	*out = NULL;
	if (!buf || ((uintptr_t)buf & 7))
		return bad(errbuf, errlen, "buffer missing or not 8-byte aligned");
	if (size < hsize)
		return bad(errbuf, errlen, "truncated header");
	if (memcmp(h->magic, PIMG_MAGIC, sizeof h->magic) != 0)
		return bad(errbuf, errlen, "bad magic (not a policy image)");
	if (h->version != PIMG_VERSION) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "policy image version %u, this airlock reads %u",
				 h->version, PIMG_VERSION);
		return -ENOTSUP;
	}
	if (h->size != size || (size & 7))
		return bad(errbuf, errlen, "size does not match (truncated?)");
	if (pimg_checksum((const char *)buf + hsize, size - hsize) != h->checksum)
		return bad(errbuf, errlen, "checksum mismatch");
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		uint64_t off = h->sec[s].offset,
			 len = (uint64_t)h->sec[s].count * pimg_entry_size((enum pimg_section)s);
		if (off < hsize || (off & 7) || off > size || len > size - off)
			return bad(errbuf, errlen, "section out of bounds");
	}
	const struct policy_image *img = buf;
	uint32_t nstr = h->sec[PIMG_SEC_STRINGS].count;
	if (nstr == 0 || ((const char *)sec_ptr(img, PIMG_SEC_STRINGS))[nstr - 1] != '\0' ||
	    !valid_str(img, h->source))
		return bad(errbuf, errlen, "string table");
	if (h->nrules != h->sec[PIMG_SEC_RULES].count || h->nrules > INT32_MAX)
		return bad(errbuf, errlen, "rule count");
	for (int a = 0; a < POLICY_ACTION_MAX; a++)
		if (h->defaults[a] >= POLICY_DECISION_MAX)
			return bad(errbuf, errlen, "default decision");
	for (uint32_t i = 0; i < h->nrules; i++)
		if (!valid_rule(img, rule_at(img, i)))
			return bad(errbuf, errlen, "rule");
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		int kind = pimg_sections[s].kind;
		if (kind < 0)
			continue;
		if (pimg_sections[s].entry == PIMG_E_BUCKET ? !valid_table(img, (enum pimg_section)s)
			: !valid_run(img, sec_ptr(img, (enum pimg_section)s), h->sec[s].count, kind))
			return bad(errbuf, errlen, "index");
	}
	*out = img;
	return 0;
}

/* ---- matching ------------------------------------------------------------------ */

struct query {
	unsigned kind;
	/* COMMAND */
	const char *prog, *base, *args;
	size_t prog_len, base_len, args_len;
	/* FILE */
	const char *path;
	size_t path_len;
	const char *comp; /* the component a component index found; NULL elsewhere */
	size_t comp_len;
	unsigned action;
	/* NETWORK */
	const char *host;
	size_t host_len;
	bool is_addr;
	struct netaddr addr;
	unsigned port;
};

struct best {
	unsigned list; /* POLICY_LIST_MAX: nothing matched yet */
	uint32_t id;
};

static bool text_matches(const struct policy_image *img, uint8_t m, uint32_t ref, uint32_t len,
			 const char *text, size_t tlen, enum glob_flavour f)
{
	const char *s;
	size_t n;
	switch (m) {
	case PIMG_M_ANY:
	case PIMG_M_KEY:
		return true;
	case PIMG_M_GLOB:
		return glob_match(str_at(img, ref), text, tlen, f);
	case PIMG_M_EXACT:
		s = str_at(img, ref);
		n = strlen(s);
		return n == tlen && memcmp(s, text, n) == 0;
	case PIMG_M_PREFIX:
		s = str_at(img, ref);
		n = strlen(s);
		return tlen >= n && memcmp(s, text, n) == 0 &&
		       (tlen == n || text[n] == (f == GLOB_PATH ? '/' : ' '));
	case PIMG_M_REGEX:
		return regex_match(prog_at(img, ref), len, text, tlen);
	default:
		return false;
	}
}

/* A file rule: its action, then its path matcher (or its component one, on the found component). */
static bool file_matches(const struct policy_image *img, const struct pimg_rule *r,
			 const struct query *q)
{
	if (!(r->actions & q->action))
		return false;
	if (r->main_m == PIMG_M_COMP)
		return q->comp && glob_match(str_at(img, r->main_ref), q->comp, q->comp_len, GLOB_TEXT);
	return text_matches(img, r->main_m, r->main_ref, r->main_len, q->path, q->path_len,
			    GLOB_PATH);
}

static bool rule_matches(const struct policy_image *img, const struct pimg_rule *r,
			 const struct query *q)
{
	if (r->kind != q->kind)
		return false;
	switch (r->kind) {
	case POLICY_RULE_COMMAND: {
		bool full = r->flags & PIMG_R_FULLPATH;
		return text_matches(img, r->main_m, r->main_ref, r->main_len, full ? q->prog : q->base,
				    full ? q->prog_len : q->base_len, GLOB_TEXT) &&
		       text_matches(img, r->args_m, r->args_ref, r->args_len, q->args, q->args_len,
				    GLOB_TEXT);
	}
	case POLICY_RULE_FILE:
		return file_matches(img, r, q);
	default:
		if (r->port && r->port != q->port)
			return false;
		if (q->is_addr && r->host_kind == NETDEST_GLOB)
			return false; /* a name pattern never admits a raw address */
		if (r->host_kind == NETDEST_ADDR) {
			struct netaddr net = { .family = r->family };
			memcpy(net.bytes, r->addr, sizeof net.bytes);
			return q->is_addr && netaddr_in(&q->addr, &net, r->prefix);
		}
		return text_matches(img, r->main_m, r->main_ref, r->main_len, q->host, q->host_len,
				    GLOB_TEXT);
	}
}

/* Offers each rule of a sorted run; stops at the first that matches or cannot win. */
static void offer_run(const struct policy_image *img, const uint32_t *ids, uint32_t n,
		      const struct query *q, struct best *b)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct pimg_rule *r = rule_at(img, ids[i]);
		if (r->list > b->list || (r->list == b->list && ids[i] >= b->id))
			return;
		if (rule_matches(img, r, q)) {
			b->list = r->list;
			b->id = ids[i];
			return;
		}
	}
}

static void offer_scan(const struct policy_image *img, enum pimg_section s, const struct query *q,
		       struct best *b)
{
	offer_run(img, sec_ptr(img, s), img->h.sec[s].count, q, b);
}

static void offer_key(const struct policy_image *img, enum pimg_section s, uint32_t hash,
		      const char *key, size_t len, const struct query *q, struct best *b)
{
	uint32_t n = img->h.sec[s].count;
	if (n == 0 || !pimg_filter_test(img->h.filter[s], hash))
		return;
	const struct pimg_bucket *t = sec_ptr(img, s);
	for (uint32_t i = hash & (n - 1);; i = (i + 1) & (n - 1)) {
		if (t[i].key == PIMG_NONE)
			return;
		if (t[i].hash == hash) {
			const char *k = str_at(img, t[i].key);
			if (memcmp(k, key, len) == 0 && k[len] == '\0') {
				const uint32_t *ids = sec_ptr(img, PIMG_SEC_IDS);
				offer_run(img, ids + t[i].ids, t[i].nids, q, b);
				return;
			}
		}
	}
}

static struct policy_verdict verdict(const struct policy_image *img, const struct best *b,
				     enum policy_action a)
{
	static const enum policy_decision of_list[POLICY_LIST_MAX] = { POLICY_DENY, POLICY_ASK,
									POLICY_ALLOW };
	if (b->list >= POLICY_LIST_MAX)
		return (struct policy_verdict){ (enum policy_decision)img->h.defaults[a], -1 };
	return (struct policy_verdict){ of_list[b->list], (int32_t)b->id };
}

/* ---- open ------------------------------------------------------------------------ */

/* Offers the rules a component's indexes name: the component itself, its extension, its prefixes. */
static void offer_component(const struct policy_image *img, struct query *q, const char *c,
			    size_t len, uint32_t hash, const char *ext, uint32_t ext_hash,
			    struct best *b)
{
	q->comp = c;
	q->comp_len = len;
	offer_key(img, PIMG_SEC_FILE_COMP, hash, c, len, q, b);
	if (ext)
		offer_key(img, PIMG_SEC_FILE_EXT, ext_hash, ext, len - (size_t)(ext - c), q, b);
	unsigned lens = img->h.cprefix_lens;
	uint32_t h = PIMG_HASH_INIT;
	for (size_t k = 0; lens >> k && k < len && k < PIMG_CPREFIX_MAX; k++) {
		h = pimg_hash_step(h, (unsigned char)c[k]);
		if (lens >> k & 1)
			offer_key(img, PIMG_SEC_FILE_CPREFIX, h, c, k + 1, q, b);
	}
	q->comp = NULL;
}

static void search_file(const struct policy_image *img, const char *path, unsigned action,
			struct best *b)
{
	struct query q = { .kind = POLICY_RULE_FILE, .path = path, .action = action };
	q.path_len = strlen(path);
	bool dir = img->h.sec[PIMG_SEC_FILE_DIR].count != 0;
	bool comp = img->h.sec[PIMG_SEC_FILE_COMP].count || img->h.sec[PIMG_SEC_FILE_EXT].count ||
		    img->h.sec[PIMG_SEC_FILE_CPREFIX].count;
	uint32_t hp = PIMG_HASH_INIT, hc = PIMG_HASH_INIT, he = PIMG_HASH_INIT;
	size_t cstart = 0;
	const char *ext = NULL;
	for (size_t i = 0;; i++) {
		char c = path[i];
		if (c == '/' || c == '\0') {
			if (dir)
				offer_key(img, PIMG_SEC_FILE_DIR, hp, path, i, &q, b);
			if (comp && i > cstart)
				offer_component(img, &q, path + cstart, i - cstart, hc, ext, he, b);
			if (c == '\0')
				break;
			hc = he = PIMG_HASH_INIT;
			cstart = i + 1;
			ext = NULL;
		} else if (c == '.') {
			he = PIMG_HASH_INIT;
			ext = path + i + 1;
			hc = pimg_hash_step(hc, (unsigned char)c);
		} else {
			hc = pimg_hash_step(hc, (unsigned char)c);
			he = pimg_hash_step(he, (unsigned char)c);
		}
		hp = pimg_hash_step(hp, (unsigned char)c);
	}
	offer_scan(img, PIMG_SEC_FILE_SCAN, &q, b);
}

struct policy_verdict policy_decide_open(const struct policy_image *img, const char *path,
					 unsigned action)
{
	struct best b = { POLICY_LIST_MAX, 0 };
	enum policy_action a = policy_file_action_kind(action);
	if (a == POLICY_ACTION_MAX || !path)
		return (struct policy_verdict){ POLICY_DENY, -1 };
	search_file(img, path, action, &b);
	return verdict(img, &b, a);
}

/* ---- exec ------------------------------------------------------------------------ */

/*
 * Decides one form of a command: program (prog_len bytes; its basename
 * base, base_len bytes) with its arguments joined.  File exec rules are
 * offered for an absolute program when file_rules.
 */
static struct policy_verdict decide_command(const struct policy_image *img, const char *prog,
					    size_t prog_len, const char *base, size_t base_len,
					    const char *args, size_t args_len, bool file_rules)
{
	struct best b = { POLICY_LIST_MAX, 0 };
	struct query q = { .kind = POLICY_RULE_COMMAND, .prog = prog, .prog_len = prog_len,
			   .base = base, .base_len = base_len, .args = args, .args_len = args_len };
	offer_key(img, PIMG_SEC_EXEC_NAME, pimg_hash(base, base_len), base, base_len, &q, &b);
	if (base != prog)
		offer_key(img, PIMG_SEC_EXEC_PATH, pimg_hash(prog, prog_len), prog, prog_len, &q, &b);
	offer_scan(img, PIMG_SEC_EXEC_SCAN, &q, &b);
	if (file_rules && prog[0] == '/')
		search_file(img, prog, POLICY_FILE_EXEC, &b);
	return verdict(img, &b, POLICY_ACTION_EXEC);
}

/* A program's name: the whole of it, and its basename (after the last '/'). */
struct prog_name {
	const char *prog, *base;
	size_t prog_len, base_len;
};

static struct prog_name prog_name(const char *program)
{
	struct prog_name p = { .prog = program, .prog_len = strlen(program) };
	const char *slash = memrchr(program, '/', p.prog_len);
	p.base = slash ? slash + 1 : program;
	p.base_len = p.prog_len - (size_t)(p.base - program);
	return p;
}

/*
 * The command as given, and, when the program is a CLI policy/cli.c knows,
 * in its normal form (n non-NULL): global options removed, or the module
 * `-m` names as the program.  The stricter verdict of the two; *normal_form
 * says whether it is the normal form's.
 */
static struct policy_verdict decide_forms(const struct policy_image *img,
					  const struct prog_name *p, const char *args,
					  size_t args_len, const struct cli_norm *n,
					  bool *normal_form)
{
	struct policy_verdict v = decide_command(img, p->prog, p->prog_len, p->base, p->base_len,
						 args, args_len, true);
	*normal_form = false;
	if (!n)
		return v;
	size_t off = n->offset < args_len ? n->offset : args_len;
	struct policy_verdict w;
	if (n->module) /* a module is no file: its name is the whole program */
		w = decide_command(img, n->program, n->program_len, n->program, n->program_len,
				   args + off, args_len - off, false);
	else
		w = decide_command(img, p->prog, p->prog_len, p->base, p->base_len, args + off,
				   args_len - off, false);
	struct policy_verdict s = policy_verdict_stricter(v, w);
	*normal_form = s.decision != v.decision || s.rule != v.rule;
	return s;
}

struct policy_verdict policy_decide_exec_joined(const struct policy_image *img, const char *program,
						const char *args, size_t args_len)
{
	if (!program)
		return (struct policy_verdict){ POLICY_DENY, -1 };
	if (!args)
		args = "", args_len = 0;
	struct cli_norm n;
	struct prog_name p = prog_name(program);
	bool norm = cli_normalize_joined(p.base, p.base_len, args, args_len, &n), normal_form;
	return decide_forms(img, &p, args, args_len, norm ? &n : NULL, &normal_form);
}

struct policy_verdict policy_decide_exec(const struct policy_image *img, const char *program,
					 const char *const *argv)
{
	return policy_decide_exec_form(img, program, argv, NULL);
}

struct policy_verdict policy_decide_exec_form(const struct policy_image *img, const char *program,
					      const char *const *argv, bool *normal_form)
{
	bool unused;
	char stack[JOIN_STACK];
	size_t total = 0, n = 0;
	if (normal_form)
		*normal_form = false;
	if (!program)
		return (struct policy_verdict){ POLICY_DENY, -1 };
	for (size_t i = 1; argv && argv[0] && argv[i]; i++)
		total += strlen(argv[i]) + 1;
	char *buf = stack;
	stack[0] = '\0';
	if (total > sizeof stack) {
		buf = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return (struct policy_verdict){ POLICY_DENY, -1 };
	}
	for (size_t i = 1; argv && argv[0] && argv[i]; i++) {
		size_t l = strlen(argv[i]);
		if (i > 1)
			buf[n++] = ' ';
		memcpy(buf + n, argv[i], l);
		n += l;
	}
	/* the real argv, not the joined text, says where the words are */
	struct cli_norm cn;
	struct prog_name p = prog_name(program);
	bool norm = cli_normalize(p.base, p.base_len, argv, &cn);
	struct policy_verdict v = decide_forms(img, &p, buf, n, norm ? &cn : NULL,
					       normal_form ? normal_form : &unused);
	/*
	 * argv[0] naming another program: git run as `git-push` (`exec -a git-push git ...`)
	 * runs push, a multi-call binary (busybox) run as `rm` runs rm.  Its name's rules may
	 * refuse (a rule asking or denying more than v), never allow: argv[0] is the caller's
	 * to choose.
	 */
	struct prog_name a = argv && argv[0] ? prog_name(argv[0]) : (struct prog_name){ 0 };
	if (a.base_len && (a.base_len != p.base_len || memcmp(a.base, p.base, a.base_len) != 0)) {
		struct policy_verdict w =
			decide_command(img, a.base, a.base_len, a.base, a.base_len, buf, n, false);
		if (w.rule >= 0 && w.decision > v.decision) {
			v = w;
			if (normal_form)
				*normal_form = false;
		}
	}
	if (buf != stack)
		munmap(buf, total);
	return v;
}

/* ---- connect ----------------------------------------------------------------------- */

struct policy_verdict policy_decide_connect(const struct policy_image *img, const char *host,
					    unsigned port)
{
	struct best b = { POLICY_LIST_MAX, 0 };
	char name[256];
	int len = host ? netaddr_host_normalise(host, name, sizeof name) : -EINVAL;
	if (len <= 0 || port == 0 || port > 65535)
		return (struct policy_verdict){ POLICY_DENY, -1 };
	struct query q = { .kind = POLICY_RULE_NETWORK, .host = name, .host_len = (size_t)len,
			   .port = port };
	q.is_addr = netaddr_parse(name, (size_t)len, &q.addr) == 0;
	if (q.is_addr) {
		offer_scan(img, PIMG_SEC_NET_ADDR, &q, &b);
	} else {
		offer_key(img, PIMG_SEC_NET_NAME, pimg_hash(name, (size_t)len), name, (size_t)len, &q,
			  &b);
		for (const char *d = strchr(name, '.'); d; d = strchr(d + 1, '.')) {
			size_t l = (size_t)len - (size_t)(d + 1 - name);
			if (l)
				offer_key(img, PIMG_SEC_NET_SUFFIX, pimg_hash(d + 1, l), d + 1, l, &q,
					  &b);
		}
	}
	offer_scan(img, PIMG_SEC_NET_SCAN, &q, &b);
	return verdict(img, &b, POLICY_ACTION_CONNECT);
}

/* ---- description ------------------------------------------------------------------- */

int policy_rule_describe(const struct policy_image *img, int32_t rule, struct policy_rule_info *out)
{
	if (rule < 0 || (uint32_t)rule >= img->h.nrules)
		return -ERANGE;
	const struct pimg_rule *r = rule_at(img, (uint32_t)rule);
	*out = (struct policy_rule_info){
		.file = str_at(img, img->h.source),
		.line = r->line,
		.column = r->column,
		.list = (enum policy_list)r->list,
		.kind = (enum policy_rule_kind)r->kind,
		.match = (enum policy_match)r->match,
		.pattern = str_at(img, r->text),
		.args = str_at(img, r->args_text),
		.actions = r->actions,
		.reason = str_at(img, r->reason),
	};
	return 0;
}

uint32_t policy_image_rule_count(const struct policy_image *img)
{
	return img->h.nrules;
}

enum policy_decision policy_image_default(const struct policy_image *img, enum policy_action a)
{
	if ((unsigned)a >= POLICY_ACTION_MAX)
		return POLICY_DENY;
	return (enum policy_decision)img->h.defaults[a];
}

unsigned policy_image_ask_timeout(const struct policy_image *img)
{
	return img->h.ask_timeout;
}
