/* load.c — reads a YAML policy into a validated struct policy: the sections, the entry points, policy_free(). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "policy/load_internal.h"

/* ---- Sections --------------------------------------------------------------------- */

/* The words of each choice are the vocabulary's own tables (policy/names.c). */
static const struct choice decision_choice = {"decision", policy_decision_words,
					      COUNT(policy_decision_words)};
static const struct choice network_choice = {"network mode", policy_network_mode_words,
					     COUNT(policy_network_mode_words)};

enum top_key {
	TOP_VERSION,
	TOP_DEFAULT,
	TOP_ASK_TIMEOUT,
	TOP_DENY,
	TOP_ASK,
	TOP_ALLOW,
	TOP_SANDBOX,
	TOP_LIMITS,
	TOP_PROFILE,
	TOP_CHECKPOINT,
	TOP_N
};
static const char *const top_keys[TOP_N] = {"version", "default", "ask_timeout", "deny",
					    "ask",     "allow",   "sandbox",     "limits",
					    "profile", "checkpoint"};

static int load_default(struct loader *ld, const struct node *n)
{
	const char *keys[POLICY_ACTION_MAX];
	struct field f[POLICY_ACTION_MAX];
	int d;

	for (int a = 0; a < POLICY_ACTION_MAX; a++)
		keys[a] = policy_action_name((enum policy_action)a);

	if (n->kind == NODE_SCALAR && !pl_is_null(n)) {
		if (pl_get_choice(ld, "'default'", n, &decision_choice, &d))
			return -1;
		ld->p->defaults[POLICY_ACTION_EXEC] = (enum policy_decision)d;
		ld->p->defaults[POLICY_ACTION_WRITE] = (enum policy_decision)d;
		ld->p->defaults[POLICY_ACTION_CONNECT] = (enum policy_decision)d;
		return 0;
	}
	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos,
			       "'default' must be allow, ask or deny, or a mapping of exec, read, "
			       "write and connect to decisions, got %s",
			       pl_describe(n).s);
	if (pl_collect(ld, n, keys, POLICY_ACTION_MAX, f, "'default'"))
		return -1;
	for (int a = 0; a < POLICY_ACTION_MAX; a++) {
		char label[32];
		if (!f[a].val)
			continue;
		snprintf(label, sizeof(label), "'default.%s'", keys[a]);
		if (pl_get_choice(ld, label, f[a].val, &decision_choice, &d))
			return -1;
		ld->p->defaults[a] = (enum policy_decision)d;
	}
	return 0;
}

static bool valid_env_name(const char *s, bool allow_star)
{
	size_t i = 0;

	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (i = 1; s[i]; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			break;
	}
	return s[i] == '\0' || (allow_star && s[i] == '*' && s[i + 1] == '\0');
}

enum list_item { ITEM_PATH, ITEM_ENV_PATTERN };

static int check_item(struct loader *ld, const char *label, const struct node *n, const char *s,
		      enum list_item what)
{
	if (what == ITEM_PATH && !*s)
		return pl_fail(ld, n->pos, "%s must not contain empty paths", label);
	if (what == ITEM_ENV_PATTERN && !valid_env_name(s, true))
		return pl_fail(ld, n->pos,
			       "invalid name '%s' in %s: a variable name ([A-Za-z_][A-Za-z0-9_]*), "
			       "optionally ending in '*'",
			       pl_node_text(n).s, label);
	return 0;
}

static int load_string_list(struct loader *ld, const char *label, const struct node *n,
			    enum list_item what, char ***out, size_t *count)
{
	char item_label[64];

	if (pl_is_null(n))
		return 0;
	if (n->kind != NODE_SEQ)
		return pl_fail(ld, n->pos, "%s must be a list of strings, got %s", label,
			       pl_describe(n).s);
	if (n->nkids && !(*out = calloc(n->nkids, sizeof(**out))))
		return pl_nomem(ld);
	*count = n->nkids;
	snprintf(item_label, sizeof(item_label), "an item of %s", label);
	for (size_t i = 0; i < n->nkids; i++) {
		if (pl_dup_string(ld, item_label, &n->kids[i], &(*out)[i]) ||
		    check_item(ld, label, &n->kids[i], (*out)[i], what))
			return -1;
	}
	return 0;
}

static const char *const builtin_passthrough[] = {"HOME", "USER", "LOGNAME",   "TERM", "LANG",
						  "LC_*", "TZ",   "COLORTERM", "PATH"};

static int default_passthrough(struct loader *ld)
{
	struct policy_sandbox *sb = &ld->p->sandbox;
	size_t n = COUNT(builtin_passthrough);

	if (!(sb->env_passthrough = calloc(n, sizeof(char *))))
		return pl_nomem(ld);
	sb->nenv_passthrough = n;
	for (size_t i = 0; i < n; i++)
		if (!(sb->env_passthrough[i] = strdup(builtin_passthrough[i])))
			return pl_nomem(ld);
	return 0;
}

static int load_env(struct loader *ld, const struct node *n)
{
	struct policy_sandbox *sb = &ld->p->sandbox;
	size_t count;

	if (pl_is_null(n))
		return 0;
	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos,
			       "'sandbox.env' must be a mapping of variable names to values, got %s",
			       pl_describe(n).s);
	count = n->nkids / 2;
	if (count && !(sb->env = calloc(count, sizeof(*sb->env))))
		return pl_nomem(ld);
	sb->nenv = count;
	for (size_t i = 0; i < count; i++) {
		const struct node *key = &n->kids[2 * i];
		char label[128];
		if (pl_dup_string(ld, "a 'sandbox.env' name", key, &sb->env[i].name))
			return -1;
		if (!valid_env_name(sb->env[i].name, false))
			return pl_fail(ld, key->pos,
				       "invalid environment variable name '%s' in 'sandbox.env' "
				       "(expected [A-Za-z_][A-Za-z0-9_]*)",
				       pl_node_text(key).s);
		snprintf(label, sizeof(label), "'sandbox.env.%s'", pl_node_text(key).s);
		if (pl_dup_string(ld, label, &n->kids[2 * i + 1], &sb->env[i].value))
			return -1;
	}
	return 0;
}

enum sandbox_key { SB_READ, SB_WRITE, SB_NETWORK, SB_PROCESS_SPAWN, SB_ENV, SB_PASSTHROUGH, SB_N };
static const char *const sandbox_keys[SB_N] = {"read", "write", "network", "process_spawn",
					       "env",  "env_passthrough"};

/* n is NULL when the policy has no sandbox: section. */
static int load_sandbox(struct loader *ld, const struct node *n)
{
	struct policy_sandbox *sb = &ld->p->sandbox;
	struct field f[SB_N];
	int mode;

	if (!n || pl_is_null(n))
		return default_passthrough(ld);
	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos, "'sandbox' must be a mapping, got %s", pl_describe(n).s);
	if (pl_collect(ld, n, sandbox_keys, SB_N, f, "'sandbox'"))
		return -1;
	if (f[SB_READ].val && load_string_list(ld, "'sandbox.read'", f[SB_READ].val, ITEM_PATH,
					       &sb->read, &sb->nread))
		return -1;
	if (f[SB_WRITE].val && load_string_list(ld, "'sandbox.write'", f[SB_WRITE].val, ITEM_PATH,
						&sb->write, &sb->nwrite))
		return -1;
	if (f[SB_NETWORK].val) {
		if (pl_get_choice(ld, "'sandbox.network'", f[SB_NETWORK].val, &network_choice, &mode))
			return -1;
		sb->network = (enum policy_network_mode)mode;
	}
	if (f[SB_PROCESS_SPAWN].val &&
	    pl_get_bool(ld, "'sandbox.process_spawn'", f[SB_PROCESS_SPAWN].val, &sb->process_spawn))
		return -1;
	if (f[SB_ENV].val && load_env(ld, f[SB_ENV].val))
		return -1;
	if (f[SB_PASSTHROUGH].val)
		return load_string_list(ld, "'sandbox.env_passthrough'", f[SB_PASSTHROUGH].val,
					ITEM_ENV_PATTERN, &sb->env_passthrough,
					&sb->nenv_passthrough);
	return default_passthrough(ld);
}

enum limit_key {
	LIM_CPU_CORES,
	LIM_MEMORY_MB,
	LIM_DISK_MB,
	LIM_MAX_PROCESSES,
	LIM_EXEC_TIMEOUT,
	LIM_SESSION_TIMEOUT,
	LIM_MAX_EGRESS_BYTES,
	LIM_N
};
static const char *const limit_keys[LIM_N] = {"cpu_cores",       "memory_mb",       "disk_mb",
					      "max_processes",   "exec_timeout",    "session_timeout",
					      "max_egress_bytes"};
static const char *const limit_labels[LIM_N] = {
	"'limits.cpu_cores'",     "'limits.memory_mb'",       "'limits.disk_mb'",
	"'limits.max_processes'", "'limits.exec_timeout'",    "'limits.session_timeout'",
	"'limits.max_egress_bytes'"};
static int load_limits(struct loader *ld, const struct node *n)
{
	struct policy_limits *lim = &ld->p->limits;
	uint64_t *const slots[LIM_N] = {
		NULL,			&lim->memory_mb,       &lim->disk_mb,
		&lim->max_processes,	&lim->exec_timeout,    &lim->session_timeout,
		&lim->max_egress_bytes,
	};
	static const unsigned bits[LIM_N] = {
		POLICY_LIMIT_CPU_CORES,	   POLICY_LIMIT_MEMORY_MB,	 POLICY_LIMIT_DISK_MB,
		POLICY_LIMIT_MAX_PROCESSES,   POLICY_LIMIT_EXEC_TIMEOUT,
		POLICY_LIMIT_SESSION_TIMEOUT, POLICY_LIMIT_MAX_EGRESS_BYTES,
	};
	struct field f[LIM_N];

	if (pl_is_null(n))
		return 0;
	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos, "'limits' must be a mapping, got %s", pl_describe(n).s);
	if (pl_collect(ld, n, limit_keys, LIM_N, f, "'limits'"))
		return -1;
	for (int k = 0; k < LIM_N; k++) {
		if (!f[k].val)
			continue;
		if (k == LIM_CPU_CORES ? pl_get_positive_number(ld, limit_labels[k], f[k].val,
							     &lim->cpu_cores)
				       : pl_get_positive(ld, limit_labels[k], f[k].val, UINT64_MAX,
						      slots[k]))
			return -1;
		lim->set |= bits[k];
	}
	return 0;
}

/* `checkpoint:` — enabled, require, ignored (booleans), keep, keep_days (counts). */
static int load_checkpoint(struct loader *ld, const struct node *n)
{
	static const char *const keys[] = { "enabled", "require", "ignored", "keep", "keep_days" };
	struct policy_checkpoint *cp = &ld->p->checkpoint;
	struct field f[5];
	if (pl_is_null(n))
		return 0;
	if (n->kind != NODE_MAP)
		return pl_fail(ld, n->pos, "'checkpoint' must be a mapping, got %s", pl_describe(n).s);
	if (pl_collect(ld, n, keys, 5, f, "'checkpoint'"))
		return -1;
	if ((f[0].val && pl_get_bool(ld, "'checkpoint.enabled'", f[0].val, &cp->enabled)) ||
	    (f[1].val && pl_get_bool(ld, "'checkpoint.require'", f[1].val, &cp->require)) ||
	    (f[2].val && pl_get_bool(ld, "'checkpoint.ignored'", f[2].val, &cp->ignored)) ||
	    (f[3].val && pl_get_uint(ld, "'checkpoint.keep'", f[3].val, &cp->keep)) ||
	    (f[4].val && pl_get_uint(ld, "'checkpoint.keep_days'", f[4].val, &cp->keep_days)))
		return -1;
	if (cp->require && !cp->enabled)
		return pl_fail(ld, f[1].val->pos, "'checkpoint.require' is true but 'checkpoint.enabled' is "
			       "false");
	return 0;
}

/*
 * `profile: NAME`: a word of lower-case letters, digits and '-'.  Which
 * names exist is the launcher's to say (it reports an unknown one at
 * profile_pos); the policy engine only keeps it.
 */
static int load_profile(struct loader *ld, const struct node *n)
{
	char *s = NULL;
	if (pl_dup_string(ld, "'profile'", n, &s))
		return -1;
	if (!*s || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(s)) {
		free(s);
		return pl_fail(ld, n->pos,
			       "'profile' must be an agent profile's name (claude, codex, ...), none "
			       "or auto, got %s",
			       pl_describe(n).s);
	}
	ld->p->profile = s;
	ld->p->profile_pos = n->pos;
	return 0;
}

static int load_version(struct loader *ld, const struct node *root)
{
	const struct node *n = pl_map_get(root, "version");
	uint64_t v;

	if (!n)
		return pl_fail(ld, root->pos, "missing 'version': a policy starts with 'version: 1'");
	if (pl_get_uint(ld, "'version'", n, &v))
		return -1;
	if (v != 1)
		return pl_fail(ld, n->pos, "unsupported policy version %s (only version 1 is supported)",
			       pl_node_text(n).s);
	ld->p->version = 1;
	return 0;
}

static int load_root(struct loader *ld, const struct node *root)
{
	struct field f[TOP_N];
	uint64_t timeout;

	if (!root || pl_is_null(root))
		return pl_fail(ld, root ? root->pos : (struct policy_pos){1, 1},
			       "the policy is empty: it needs at least 'version: 1'");
	if (root->kind != NODE_MAP)
		return pl_fail(ld, root->pos,
			       "a policy must be a mapping (version:, deny:, allow:, ...), got %s",
			       pl_describe(root).s);
	if (load_version(ld, root) || pl_collect(ld, root, top_keys, TOP_N, f, "the policy"))
		return -1;
	if (f[TOP_DEFAULT].val && load_default(ld, f[TOP_DEFAULT].val))
		return -1;
	if (f[TOP_ASK_TIMEOUT].val) {
		if (pl_get_positive(ld, "'ask_timeout'", f[TOP_ASK_TIMEOUT].val, 86400, &timeout))
			return -1;
		ld->p->ask_timeout = (unsigned)timeout;
	}
	if (pl_load_rules(ld, root) || load_sandbox(ld, f[TOP_SANDBOX].val))
		return -1;
	if (f[TOP_PROFILE].val && load_profile(ld, f[TOP_PROFILE].val))
		return -1;
	if (f[TOP_CHECKPOINT].val && load_checkpoint(ld, f[TOP_CHECKPOINT].val))
		return -1;
	return f[TOP_LIMITS].val ? load_limits(ld, f[TOP_LIMITS].val) : 0;
}

/* ---- Public entry points ------------------------------------------------------------- */

static struct policy *policy_new(struct loader *ld, const char *name)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p || !(p->source = strdup(name))) {
		free(p);
		pl_nomem(ld);
		return NULL;
	}
	p->defaults[POLICY_ACTION_EXEC] = POLICY_ASK;
	p->defaults[POLICY_ACTION_READ] = POLICY_ALLOW;
	p->defaults[POLICY_ACTION_WRITE] = POLICY_ASK;
	p->defaults[POLICY_ACTION_CONNECT] = POLICY_ASK;
	p->ask_timeout = 60;
	p->sandbox.network = POLICY_NETWORK_PROXY;
	p->sandbox.process_spawn = true;
	p->checkpoint = (struct policy_checkpoint){ .enabled = true, .keep = 20, .keep_days = 14 };
	return p;
}

static void error_init(struct policy_error *err, const char *name)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", name);
}

struct policy *policy_load_buffer(const char *name, const char *buf, size_t len,
				  struct policy_error *err)
{
	struct loader ld = {.buf = buf ? buf : "", .len = buf ? len : 0, .err = err};
	const char *nul;
	struct node root;
	bool have_root = false;
	int rc;

	if (!name)
		name = "<policy>";
	error_init(err, name);
	if (len > POLICY_MAX_FILE_SIZE) {
		pl_fail(&ld, no_pos, "the policy is larger than %u bytes (1 MiB)", POLICY_MAX_FILE_SIZE);
		return NULL;
	}
	if ((nul = memchr(ld.buf, '\0', ld.len))) {
		pl_fail(&ld, pl_offset_pos(&ld, (size_t)(nul - ld.buf)),
			"the policy contains a NUL byte; it must be UTF-8 text");
		return NULL;
	}
	if (!(ld.p = policy_new(&ld, name)))
		return NULL;
	if (pl_build_tree(&ld, &root, &have_root)) {
		policy_free(ld.p);
		return NULL;
	}
	rc = load_root(&ld, have_root ? &root : NULL);
	if (have_root)
		pl_node_free(&root);
	if (rc) {
		policy_free(ld.p);
		return NULL;
	}
	return ld.p;
}

/* Reads at most POLICY_MAX_FILE_SIZE + 1 bytes of fd, so an oversized file is seen, not read. */
static int read_bounded(struct loader *ld, int fd, size_t hint, char **out, size_t *len)
{
	size_t limit = (size_t)POLICY_MAX_FILE_SIZE + 1, cap = hint < limit ? hint : limit;
	char *buf = malloc(cap);

	if (!buf)
		return pl_nomem(ld);
	*len = 0;
	while (*len < limit) {
		if (*len == cap) {
			char *grown = grow_array(buf, &cap, cap + 1, 1, 0);
			if (!grown) {
				free(buf);
				return pl_nomem(ld);
			}
			buf = grown;
		}
		size_t room = cap - *len < limit - *len ? cap - *len : limit - *len;
		ssize_t got = read(fd, buf + *len, room);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			free(buf);
			return pl_fail(ld, no_pos, "cannot read the policy: %s", strerror(e));
		}
		if (got == 0)
			break;
		*len += (size_t)got;
	}
	if (*len > POLICY_MAX_FILE_SIZE) {
		free(buf);
		return pl_fail(ld, no_pos, "the policy file is larger than %u bytes (1 MiB)",
			       POLICY_MAX_FILE_SIZE);
	}
	*out = buf;
	return 0;
}

/* What a file that is not a regular one is, for an error message (inode(7)'s S_IFMT types). */
static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "an unknown kind of file";
	}
}

struct policy *policy_load_file(const char *path, struct policy_error *err)
{
	struct loader ld = {.err = err};
	struct policy *p = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, fl;

	error_init(err, path);
	/*
	 * Only a regular file is a policy.  A FIFO would block open(2) until a
	 * writer comes (fifo(7)), and a device may never end (/dev/zero) or wait
	 * for input (/dev/tty): so the open does not block (O_NONBLOCK), and the
	 * opened file, not the name, is checked (fstat(2): no race with a rename).
	 * O_NONBLOCK is cleared before reading; it means nothing for a regular file.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		pl_fail(&ld, no_pos, "cannot open the policy: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		pl_fail(&ld, no_pos, "cannot read the policy: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		pl_fail(&ld, no_pos, "not a regular file (%s): a policy must be a regular file",
			file_kind(st.st_mode));
		return NULL;
	}
	if ((uint64_t)st.st_size > POLICY_MAX_FILE_SIZE) {
		close(fd);
		pl_fail(&ld, no_pos, "the policy file is larger than %u bytes (1 MiB)",
			POLICY_MAX_FILE_SIZE);
		return NULL;
	}
	if (read_bounded(&ld, fd, (size_t)st.st_size + 1, &buf, &len) == 0)
		p = policy_load_buffer(path, buf, len, err);
	close(fd);
	free(buf);
	return p;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

int policy_rule_add(struct policy *p, enum policy_list list, enum policy_rule_kind kind,
		    enum policy_match match, const char *pattern, unsigned actions,
		    const char *reason)
{
	struct policy_rule *rules = realloc(p->rules, (p->nrules + 1) * sizeof *rules);
	if (!rules)
		return -ENOMEM;
	p->rules = rules;
	struct policy_rule *r = &rules[p->nrules];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->list = list;
	r->match = match;
	r->actions = actions;
	char **slot = kind == POLICY_RULE_COMMAND ? &r->command
		      : kind == POLICY_RULE_FILE  ? &r->path
						  : &r->destination;
	*slot = strdup(pattern);
	r->reason = reason ? strdup(reason) : NULL;
	if (!*slot || (reason && !r->reason)) {
		free(*slot);
		free(r->reason);
		return -ENOMEM;
	}
	p->nrules++;
	return 0;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		struct policy_rule *r = &p->rules[i];
		free(r->command);
		free(r->args);
		free(r->path);
		free(r->destination);
		free(r->reason);
	}
	free(p->rules);
	free_strings(p->sandbox.read, p->sandbox.nread);
	free_strings(p->sandbox.write, p->sandbox.nwrite);
	for (size_t i = 0; p->sandbox.env && i < p->sandbox.nenv; i++) {
		free(p->sandbox.env[i].name);
		free(p->sandbox.env[i].value);
	}
	free(p->sandbox.env);
	free_strings(p->sandbox.env_passthrough, p->sandbox.nenv_passthrough);
	free(p->profile);
	free(p->source);
	free(p);
}
