/* compile.c — turns a loaded policy into a flat, indexed, pointer-free policy image. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "policy/glob.h"
#include "policy/image_format.h"
#include "policy/netaddr.h"
#include "policy/policy.h"
#include "policy/regex.h"

#define IMAGE_MAX (1u << 30)

struct buf {
	uint8_t *data; /* owned */
	size_t len, cap;
};

/* One (table, key) -> rule membership, before tables are built. */
struct entry {
	uint32_t hash;
	uint32_t key; /* string offset */
	uint32_t id;
	uint8_t list;
	uint8_t table; /* enum pimg_section */
};

struct compiler {
	const struct policy *p;
	const struct policy_context *ctx;
	struct policy_error *err;
	struct buf rules, strings, progs;
	struct entry *entries; /* owned */
	size_t nentries, centries;
	uint32_t *scan[PIMG_SEC_MAX]; /* owned; ids per scan section */
	size_t nscan[PIMG_SEC_MAX], cscan[PIMG_SEC_MAX];
};

static int buf_put(struct buf *b, const void *p, size_t n, uint32_t *off)
{
	if (b->len + n > IMAGE_MAX)
		return -E2BIG;
	if (b->len + n > b->cap) {
		uint8_t *d = grow_array(b->data, &b->cap, b->len + n, 1, 256);
		if (!d)
			return -ENOMEM;
		b->data = d;
	}
	if (off)
		*off = (uint32_t)b->len;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

static int add_string_n(struct compiler *c, const char *s, size_t n, uint32_t *off)
{
	int r = buf_put(&c->strings, s, n, off);
	return r ? r : buf_put(&c->strings, "", 1, NULL);
}

static int add_string(struct compiler *c, const char *s, uint32_t *off)
{
	if (!s) {
		*off = PIMG_NONE;
		return 0;
	}
	return add_string_n(c, s, strlen(s), off);
}

static int compile_error(struct compiler *c, struct policy_pos pos, const char *fmt, ...)
{
	va_list ap;
	snprintf(c->err->file, sizeof c->err->file, "%s", c->p->source ? c->p->source : "<policy>");
	c->err->line = pos.line;
	c->err->column = pos.column;
	va_start(ap, fmt);
	vsnprintf(c->err->message, sizeof c->err->message, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int add_entry(struct compiler *c, enum pimg_section table, const char *key, size_t klen,
		     uint32_t id, uint8_t list)
{
	if (c->nentries == c->centries) {
		struct entry *e = grow_array(c->entries, &c->centries, c->nentries + 1, sizeof *e, 64);
		if (!e)
			return -ENOMEM;
		c->entries = e;
	}
	struct entry *e = &c->entries[c->nentries];
	int r = add_string_n(c, key, klen, &e->key);
	if (r)
		return r;
	e->hash = pimg_hash(key, klen);
	e->id = id;
	e->list = list;
	e->table = (uint8_t)table;
	c->nentries++;
	return 0;
}

static int add_scan(struct compiler *c, enum pimg_section sec, uint32_t id)
{
	if (c->nscan[sec] == c->cscan[sec]) {
		uint32_t *v = grow_array(c->scan[sec], &c->cscan[sec], c->nscan[sec] + 1, sizeof *v, 16);
		if (!v)
			return -ENOMEM;
		c->scan[sec] = v;
	}
	c->scan[sec][c->nscan[sec]++] = id;
	return 0;
}

static int add_regex(struct compiler *c, const char *re, struct policy_pos pos, uint32_t *ref,
		     uint32_t *len)
{
	char why[200];
	size_t n;
	if (regex_compile(re, NULL, 0, &n, why, sizeof why) < 0)
		return compile_error(c, pos, "bad regex: %s", why);
	int r = buf_put(&c->progs, NULL, 0, ref);
	if (r)
		return r;
	/* reserve n bytes, then compile in place */
	uint8_t zero[64] = { 0 };
	for (size_t left = n; left; left -= left < sizeof zero ? left : sizeof zero)
		if ((r = buf_put(&c->progs, zero, left < sizeof zero ? left : sizeof zero, NULL)))
			return r;
	if (regex_compile(re, c->progs.data + *ref, n, &n, why, sizeof why) < 0)
		return compile_error(c, pos, "bad regex: %s", why);
	*len = (uint32_t)n;
	return 0;
}

/* The string matcher for a field: glob / exact / prefix as written, or a regex program. */
static int set_matcher(struct compiler *c, enum policy_match m, const char *text,
		       struct policy_pos pos, uint8_t *kind, uint32_t *ref, uint32_t *len)
{
	static const uint8_t kinds[POLICY_MATCH_MAX] = { PIMG_M_GLOB, PIMG_M_EXACT, PIMG_M_PREFIX,
							 PIMG_M_REGEX };
	*kind = kinds[m];
	*len = 0;
	if (m == POLICY_MATCH_REGEX)
		return add_regex(c, text, pos, ref, len);
	return add_string(c, text, ref);
}

static int compile_command(struct compiler *c, const struct policy_rule *pr, uint32_t id,
			   struct pimg_rule *r)
{
	bool full = strchr(pr->command, '/') != NULL;
	int e;
	r->flags = full ? PIMG_R_FULLPATH : 0;
	if (pr->args) {
		e = set_matcher(c, pr->match, pr->args, pr->args_pos, &r->args_m, &r->args_ref,
				&r->args_len);
		if (e)
			return e;
	}
	bool literal = pr->match == POLICY_MATCH_EXACT || pr->match == POLICY_MATCH_PREFIX ||
		       (pr->match == POLICY_MATCH_GLOB && glob_is_literal(pr->command));
	if (literal) {
		r->main_m = PIMG_M_KEY;
		return add_entry(c, full ? PIMG_SEC_EXEC_PATH : PIMG_SEC_EXEC_NAME, pr->command,
				 strlen(pr->command), id, r->list);
	}
	e = set_matcher(c, pr->match, pr->command, pr->pattern_pos, &r->main_m, &r->main_ref,
			&r->main_len);
	return e ? e : add_scan(c, PIMG_SEC_EXEC_SCAN, id);
}

/* Appends s to out (cap bytes at *n), quoting glob specials when quote is set. */
static bool append(char *out, size_t cap, size_t *n, const char *s, bool quote)
{
	for (; *s; s++) {
		if (quote && strchr("*?[\\", *s)) {
			if (*n + 1 >= cap)
				return false;
			out[(*n)++] = '\\';
		}
		if (*n + 1 >= cap)
			return false;
		out[(*n)++] = *s;
	}
	out[*n] = '\0';
	return true;
}

/*
 * Expands a path pattern to an absolute one: "~" / "~/x" against home,
 * "." / "./x" and "a/b" against the workspace, a bare name (no '/') to
 * a "**" component then the name (any depth).  Drops a trailing '/' and doubled slashes.
 */
static int expand_path(struct compiler *c, const struct policy_rule *pr, bool glob, char *out,
		       size_t cap)
{
	const char *s = pr->path, *base = NULL;
	size_t n = 0;
	size_t len = strlen(s);
	while (len > 1 && s[len - 1] == '/')
		len--;
	char tmp[4096];
	if (len >= sizeof tmp)
		return compile_error(c, pr->pattern_pos, "path pattern too long");
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	s = tmp;
	bool dot = s[0] == '.' && (s[1] == '/' || s[1] == '\0');
	if (s[0] == '~') {
		base = c->ctx->home;
		if (!base || base[0] != '/')
			return compile_error(c, pr->pattern_pos,
					     "'%s' needs a home directory, and none is known (set HOME)",
					     pr->path);
		s += 1;
	} else if (s[0] == '/') {
		base = "";
	} else if (glob && !dot && !strchr(s, '/')) {
		base = "/**/";
	} else {
		base = c->ctx->workspace;
		if (!base || base[0] != '/')
			return compile_error(c, pr->pattern_pos,
					     "'%s' is relative to the workspace, and none is known",
					     pr->path);
		if (dot)
			s += 1;
		if (s[0] != '\0') {
			if (!append(out, cap, &n, base, glob) || !append(out, cap, &n, "/", false))
				return compile_error(c, pr->pattern_pos, "path pattern too long");
			base = "";
		}
	}
	bool literal_base = base[0] == '/' && strcmp(base, "/**/") != 0;
	if (!append(out, cap, &n, base, glob && literal_base) ||
	    !append(out, cap, &n, s, false))
		return compile_error(c, pr->pattern_pos, "path pattern too long");
	/* collapse "//" and drop a trailing '/' left by "~/" or "./" */
	size_t w = 0;
	for (size_t i = 0; out[i]; i++)
		if (!(out[i] == '/' && w > 0 && out[w - 1] == '/'))
			out[w++] = out[i];
	while (w > 1 && out[w - 1] == '/')
		w--;
	if (w == 0)
		out[w++] = '/';
	out[w] = '\0';
	return 0;
}

/* "*" + literal-with-a-dot: the extension after the last '.', or NULL. */
static const char *ext_key(const char *name)
{
	if (name[0] != '*' || !glob_is_literal(name + 1))
		return NULL;
	const char *dot = strrchr(name + 1, '.');
	return dot && dot[1] ? dot + 1 : NULL;
}

/*
 * A pattern without '/' matches a component anywhere: it is indexed by that
 * component (literal), its extension ("*.pem") or its literal prefix
 * ("id_rsa*"), and matched against the one component the index found.
 */
static int index_component(struct compiler *c, const char *name, uint32_t id, struct pimg_rule *r)
{
	if (glob_is_literal(name)) {
		r->main_m = PIMG_M_KEY;
		return add_entry(c, PIMG_SEC_FILE_COMP, name, strlen(name), id, r->list);
	}
	const char *ext = ext_key(name);
	size_t lit = glob_literal_prefix(name);
	if (!ext && !lit) /* nothing to index on: the whole path glob, scanned */
		return add_scan(c, PIMG_SEC_FILE_SCAN, id);
	int e = add_string(c, name, &r->main_ref);
	if (e)
		return e;
	r->main_m = PIMG_M_COMP;
	if (ext)
		return add_entry(c, PIMG_SEC_FILE_EXT, ext, strlen(ext), id, r->list);
	return add_entry(c, PIMG_SEC_FILE_CPREFIX, name,
			 lit < PIMG_CPREFIX_MAX ? lit : PIMG_CPREFIX_MAX, id, r->list);
}

static int index_path_glob(struct compiler *c, const char *g, uint32_t id, struct pimg_rule *r)
{
	const char *rest = strncmp(g, "/**/", 4) == 0 ? g + 4 : NULL;
	if (rest && !strchr(rest, '/'))
		return index_component(c, rest, id, r);
	size_t lit = glob_literal_prefix(g);
	if (g[lit] == '\0') {
		r->main_m = PIMG_M_KEY;
		return add_entry(c, PIMG_SEC_FILE_DIR, g, strcmp(g, "/") ? lit : 0, id, r->list);
	}
	while (lit > 0 && g[lit - 1] != '/')
		lit--;
	return add_entry(c, PIMG_SEC_FILE_DIR, g, lit ? lit - 1 : 0, id, r->list);
}

static int compile_file(struct compiler *c, const struct policy_rule *pr, uint32_t id,
			struct pimg_rule *r)
{
	char path[8192];
	int e;
	r->actions = (uint8_t)pr->actions;
	if (pr->match == POLICY_MATCH_REGEX) {
		e = add_regex(c, pr->path, pr->pattern_pos, &r->main_ref, &r->main_len);
		r->main_m = PIMG_M_REGEX;
		return e ? e : add_scan(c, PIMG_SEC_FILE_SCAN, id);
	}
	bool glob = pr->match == POLICY_MATCH_GLOB;
	if ((e = expand_path(c, pr, glob, path, sizeof path)))
		return e;
	if ((e = add_string(c, path, &r->main_ref)))
		return e;
	size_t klen = strcmp(path, "/") ? strlen(path) : 0;
	if (pr->match == POLICY_MATCH_EXACT) {
		r->main_m = PIMG_M_EXACT;
		return add_entry(c, PIMG_SEC_FILE_DIR, path, klen, id, r->list);
	}
	if (pr->match == POLICY_MATCH_PREFIX) {
		r->main_m = PIMG_M_KEY;
		return add_entry(c, PIMG_SEC_FILE_DIR, path, klen, id, r->list);
	}
	r->main_m = PIMG_M_GLOB;
	return index_path_glob(c, path, id, r);
}

static int compile_network(struct compiler *c, const struct policy_rule *pr, uint32_t id,
			   struct pimg_rule *r)
{
	struct netdest d;
	char why[256];
	if (netdest_parse(pr->destination, pr->match, &d, why, sizeof why) < 0)
		return compile_error(c, pr->pattern_pos, "%s", why);
	r->host_kind = (uint8_t)d.kind;
	r->port = (uint16_t)d.port;
	switch (d.kind) {
	case NETDEST_ANY:
		r->main_m = PIMG_M_ANY;
		return add_scan(c, PIMG_SEC_NET_SCAN, id);
	case NETDEST_NAME:
	case NETDEST_SUFFIX:
		r->main_m = PIMG_M_KEY;
		return add_entry(c, d.kind == NETDEST_NAME ? PIMG_SEC_NET_NAME : PIMG_SEC_NET_SUFFIX,
				 d.host, strlen(d.host), id, r->list);
	case NETDEST_GLOB:
		r->main_m = PIMG_M_GLOB;
		int e = add_string(c, d.host, &r->main_ref);
		return e ? e : add_scan(c, PIMG_SEC_NET_SCAN, id);
	case NETDEST_ADDR:
	default:
		r->main_m = PIMG_M_ANY;
		r->family = d.net.family;
		r->prefix = (uint8_t)d.prefix;
		memcpy(r->addr, d.net.bytes, sizeof r->addr);
		return add_scan(c, PIMG_SEC_NET_ADDR, id);
	}
}

static int compile_rule(struct compiler *c, uint32_t id)
{
	const struct policy_rule *pr = &c->p->rules[id];
	struct pimg_rule r;
	int e;
	memset(&r, 0, sizeof r);
	r.kind = (uint8_t)pr->kind;
	r.list = (uint8_t)pr->list;
	r.match = (uint8_t)pr->match;
	r.line = pr->pos.line;
	r.column = pr->pos.column;
	r.main_ref = r.args_ref = PIMG_NONE;
	const char *text = pr->kind == POLICY_RULE_COMMAND ? pr->command
			   : pr->kind == POLICY_RULE_FILE  ? pr->path
							   : pr->destination;
	if (!text || (unsigned)pr->list >= POLICY_LIST_MAX || (unsigned)pr->match >= POLICY_MATCH_MAX)
		return compile_error(c, pr->pos, "incomplete rule");
	if ((e = add_string(c, text, &r.text)) || (e = add_string(c, pr->args, &r.args_text)) ||
	    (e = add_string(c, pr->reason, &r.reason)))
		return e;
	switch (pr->kind) {
	case POLICY_RULE_COMMAND:
		e = compile_command(c, pr, id, &r);
		break;
	case POLICY_RULE_FILE:
		e = compile_file(c, pr, id, &r);
		break;
	case POLICY_RULE_NETWORK:
		e = compile_network(c, pr, id, &r);
		break;
	default:
		return compile_error(c, pr->pos, "unknown rule kind");
	}
	return e ? e : buf_put(&c->rules, &r, sizeof r, NULL);
}

static const struct compiler *sort_ctx;

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	const char *s = (const char *)sort_ctx->strings.data;
	int k = strcmp(s + x->key, s + y->key);
	if (k)
		return k;
	if (x->list != y->list)
		return x->list < y->list ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct policy_rule *r = sort_ctx->p->rules;
	if (r[x].list != r[y].list)
		return r[x].list < r[y].list ? -1 : 1;
	return x < y ? -1 : x > y;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Builds one hash table section from the sorted entries [e, e+n), and its filter. */
static int build_table(struct compiler *c, const struct entry *e, size_t n, struct buf *ids,
		       struct buf *out, uint64_t filter[4])
{
	size_t nkeys = 0;
	for (size_t i = 0; i < n; i++)
		nkeys += i == 0 || e[i].hash != e[i - 1].hash ||
			 strcmp((char *)c->strings.data + e[i].key,
				(char *)c->strings.data + e[i - 1].key) != 0;
	size_t cap = 1;
	while (cap < nkeys * 2)
		cap *= 2;
	struct pimg_bucket *t = calloc(cap, sizeof *t);
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		t[i].key = PIMG_NONE;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint32_t first = (uint32_t)(ids->len / 4);
		for (; j < n && e[j].hash == e[i].hash &&
		       strcmp((char *)c->strings.data + e[j].key, (char *)c->strings.data + e[i].key) == 0;
		     j++) {
			int r = buf_put(ids, &e[j].id, 4, NULL);
			if (r) {
				free(t);
				return r;
			}
		}
		unsigned b1 = pimg_filter_bit1(e[i].hash), b2 = pimg_filter_bit2(e[i].hash);
		filter[b1 >> 6] |= 1ull << (b1 & 63);
		filter[b2 >> 6] |= 1ull << (b2 & 63);
		size_t slot = e[i].hash & (cap - 1);
		while (t[slot].key != PIMG_NONE)
			slot = (slot + 1) & (cap - 1);
		t[slot] = (struct pimg_bucket){ e[i].hash, e[i].key, first, (uint32_t)(j - i) };
		i = j;
	}
	int r = n ? buf_put(out, t, cap * sizeof *t, NULL) : 0;
	free(t);
	return r;
}

/* The key lengths PIMG_SEC_FILE_CPREFIX holds in entries [start, end): bit k-1 for k bytes. */
static uint8_t cprefix_lens(const struct compiler *c, size_t start, size_t end)
{
	uint8_t lens = 0;
	for (size_t k = start; k < end; k++)
		lens |= (uint8_t)(1u << (strlen((char *)c->strings.data + c->entries[k].key) - 1));
	return lens;
}

/* Sorts the index entries and scans, then builds each index section into sec[], its filter into h. */
static int build_indexes(struct compiler *c, struct buf sec[PIMG_SEC_MAX], struct pimg_header *h)
{
	size_t start = 0;
	int r = 0;
	sort_ctx = c;
	if (c->nentries)
		qsort(c->entries, c->nentries, sizeof *c->entries, cmp_entry);
	for (int s = 0; s < PIMG_SEC_MAX && !r; s++) {
		if (pimg_sections[s].entry == PIMG_E_BUCKET) {
			size_t end = start;
			while (end < c->nentries && c->entries[end].table == s)
				end++;
			if (end > start)
				r = build_table(c, c->entries + start, end - start, &sec[PIMG_SEC_IDS],
						&sec[s], h->filter[s]);
			if (s == PIMG_SEC_FILE_CPREFIX)
				h->cprefix_lens = cprefix_lens(c, start, end);
			start = end;
		} else if (pimg_sections[s].kind >= 0 && c->nscan[s]) {
			qsort(c->scan[s], c->nscan[s], sizeof(uint32_t), cmp_id);
			r = buf_put(&sec[s], c->scan[s], c->nscan[s] * sizeof(uint32_t), NULL);
		}
	}
	return r;
}

/* Lays the header h and the sections out in one 8-byte aligned blob, checksummed. */
static int write_image(const struct compiler *c, const struct buf sec[PIMG_SEC_MAX],
		       struct pimg_header *h, void **image, size_t *size)
{
	size_t hsize = align8(sizeof *h), total = hsize, off = hsize;
	for (int s = 0; s < PIMG_SEC_MAX; s++)
		total += align8(sec[s].len);
	if (total > IMAGE_MAX)
		return -E2BIG;
	uint8_t *img = aligned_alloc(8, total);
	if (!img)
		return -ENOMEM;
	memset(img, 0, total);
	for (int s = 0; s < PIMG_SEC_MAX; s++) {
		h->sec[s].offset = (uint32_t)off;
		h->sec[s].count = (uint32_t)(sec[s].len / pimg_entry_size((enum pimg_section)s));
		if (sec[s].len)
			memcpy(img + off, sec[s].data, sec[s].len);
		off += align8(sec[s].len);
	}
	memcpy(h->magic, PIMG_MAGIC, sizeof h->magic);
	h->version = PIMG_VERSION;
	h->size = (uint32_t)total;
	h->nrules = (uint32_t)c->p->nrules;
	h->ask_timeout = c->p->ask_timeout;
	for (int a = 0; a < POLICY_ACTION_MAX; a++)
		h->defaults[a] = (uint8_t)c->p->defaults[a];
	h->source = 0; /* the source name is the first string */
	h->checksum = pimg_checksum(img + hsize, total - hsize);
	memcpy(img, h, sizeof *h);
	*image = img;
	*size = total;
	return 0;
}

static int assemble(struct compiler *c, void **image, size_t *size)
{
	struct buf sec[PIMG_SEC_MAX];
	struct pimg_header h;
	memset(sec, 0, sizeof sec);
	memset(&h, 0, sizeof h);
	int r = build_indexes(c, sec, &h);
	sec[PIMG_SEC_RULES] = c->rules;
	sec[PIMG_SEC_STRINGS] = c->strings;
	sec[PIMG_SEC_PROGS] = c->progs;
	if (!r)
		r = write_image(c, sec, &h, image, size);
	/* the rules, strings and programs are the compiler's: policy_compile() frees them */
	for (int s = 0; s < PIMG_SEC_MAX; s++)
		if (s != PIMG_SEC_RULES && s != PIMG_SEC_STRINGS && s != PIMG_SEC_PROGS)
			free(sec[s].data);
	return r;
}

int policy_compile(const struct policy *p, const struct policy_context *ctx, void **image,
		   size_t *size, struct policy_error *err)
{
	struct compiler c;
	static const struct policy_context none = { NULL, NULL };
	int r;
	memset(&c, 0, sizeof c);
	memset(err, 0, sizeof *err);
	c.p = p;
	c.ctx = ctx ? ctx : &none;
	c.err = err;
	*image = NULL;
	*size = 0;
	uint32_t src;
	r = add_string(&c, p->source ? p->source : "<policy>", &src);
	for (size_t i = 0; !r && i < p->nrules; i++)
		r = compile_rule(&c, (uint32_t)i);
	if (!r)
		r = assemble(&c, image, size);
	if (r && r != -EINVAL) {
		snprintf(err->file, sizeof err->file, "%s", p->source ? p->source : "<policy>");
		snprintf(err->message, sizeof err->message, "cannot compile policy: %s",
			 r == -E2BIG ? "image larger than 1 GiB" : "out of memory");
	}
	free(c.rules.data);
	free(c.strings.data);
	free(c.progs.data);
	free(c.entries);
	for (int s = 0; s < PIMG_SEC_MAX; s++)
		free(c.scan[s]);
	return r;
}
