/* sandbox.c — the bubblewrap command line: typed setup operations appended by small builders, rendered to argv in one pass. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "launcher/sandbox/masks.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/sandbox/session.h"

/*
 * Layout of the command line, in this order (bwrap applies mounts in order,
 * a later one on top of an earlier one):
 *
 *   namespaces and flags   --die-with-parent --new-session --unshare-pid/ipc/uts
 *                          --unshare-cgroup-try [--unshare-user] --cap-drop ALL
 *                          [--unshare-net]
 *   readable tree          --ro-bind P P per existing sandbox.read path, or
 *                          --ro-bind / / when sandbox.read is empty
 *   writable tree          --bind W W: the workspace, each existing sandbox.write path
 *   the sandbox's own      --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run
 *                          --ro-bind SESSION_DIR /run/airlock
 *                          [--ro-bind SHIM /run/airlock/airlock-preload.so]
 *   late binds             read / write paths strictly inside /dev, /proc, /tmp
 *                          or /run (e.g. a workspace in /tmp), so the private
 *                          mounts above do not hide them
 *   protections            the session copies (copies.h): --bind COPY P over
 *                          each runs-later path (.git with its objects, refs...
 *                          bound through; .claude, .vscode, .mcp.json, .envrc,
 *                          a profile's), their store hidden; then --ro-bind P P
 *                          over existing, writable policy file, .airlock (and
 *                          without copies .git/hooks, .git/config, editor and
 *                          agent config dirs), shell rc files
 *   masks                  /dev/null or a read-only empty tmpfs over what
 *                          deny-read rules and the mandatory list name, and
 *                          /dev/null over each unix socket of the host that
 *                          shows and the policy does not name; last, so
 *                          nothing re-exposes them
 *   process                [--seccomp FD] --clearenv --setenv... --chdir CWD
 *                          -- [/run/airlock/airlock-landlock --abi N -r / -w W...
 *                          --] PROGRAM ARGV[1..]
 *
 * The Landlock helper (landlock/airlock-landlock.c), when there is one, runs
 * after bwrap has built every mount and before the agent: its ruleset allows
 * reading and executing everywhere visible and writing only beneath W, the
 * destinations of the read-write mounts above (landlock_writable(): derived
 * from these operations, not listed twice), so it refuses nothing the mounts
 * allow and catches what a mount mistake would let through.
 *
 * A read or write path above /dev, /proc, /tmp or /run ("/") goes before the
 * sandbox's own mounts, which then cover that part of it; one equal to them is
 * dropped: /tmp is always private, even with `write: ["/tmp"]` (the default
 * policy's).  A path already readable (or writable) through an earlier bind
 * gets no second mount.
 */

enum sandbox_op_kind {
	SANDBOX_OP_DIE_WITH_PARENT,
	SANDBOX_OP_NEW_SESSION,
	SANDBOX_OP_UNSHARE_PID,
	SANDBOX_OP_UNSHARE_IPC,
	SANDBOX_OP_UNSHARE_UTS,
	SANDBOX_OP_UNSHARE_CGROUP_TRY,
	SANDBOX_OP_UNSHARE_USER,
	SANDBOX_OP_UNSHARE_NET,
	SANDBOX_OP_CAP_DROP,    /* a: capability ("ALL") */
	SANDBOX_OP_RO_BIND,     /* a: host source, b: destination */
	SANDBOX_OP_BIND,        /* a: host source, b: destination (read-write) */
	SANDBOX_OP_RO_BIND_TRY, /* a: host source (may be absent), b: destination */
	SANDBOX_OP_SYMLINK,     /* a: link text, b: where the link is created */
	SANDBOX_OP_DEV,         /* a: destination */
	SANDBOX_OP_PROC,        /* a: destination */
	SANDBOX_OP_TMPFS,       /* a: destination */
	SANDBOX_OP_MASK_FILE,   /* a: path: /dev/null bound read-only over it */
	SANDBOX_OP_MASK_DIR,    /* a: path: an empty tmpfs over it, remounted read-only */
	SANDBOX_OP_DIR,         /* a: directory to create */
	SANDBOX_OP_SECCOMP,     /* a: fd number, decimal */
	SANDBOX_OP_CLEARENV,
	SANDBOX_OP_SETENV,      /* a: name, b: value */
	SANDBOX_OP_CHDIR,       /* a: directory */
	SANDBOX_OP_RO_BIND_DATA, /* a: fd, b: destination file */
	SANDBOX_OP_HOME_TMPFS,  /* a: home: an empty tmpfs, made read-only by a REMOUNT_RO at the end */
	SANDBOX_OP_REMOUNT_RO,  /* a: a mount point already made: read-only from now on */
	SANDBOX_OP_MAX
};

/* How a kind renders: its bwrap option and how many of a, b follow it. */
static const struct {
	const char *option;
	unsigned nargs;
} op_syntax[SANDBOX_OP_MAX] = {
	[SANDBOX_OP_DIE_WITH_PARENT] = { "--die-with-parent", 0 },
	[SANDBOX_OP_NEW_SESSION] = { "--new-session", 0 },
	[SANDBOX_OP_UNSHARE_PID] = { "--unshare-pid", 0 },
	[SANDBOX_OP_UNSHARE_IPC] = { "--unshare-ipc", 0 },
	[SANDBOX_OP_UNSHARE_UTS] = { "--unshare-uts", 0 },
	[SANDBOX_OP_UNSHARE_CGROUP_TRY] = { "--unshare-cgroup-try", 0 },
	[SANDBOX_OP_UNSHARE_USER] = { "--unshare-user", 0 },
	[SANDBOX_OP_UNSHARE_NET] = { "--unshare-net", 0 },
	[SANDBOX_OP_CAP_DROP] = { "--cap-drop", 1 },
	[SANDBOX_OP_RO_BIND] = { "--ro-bind", 2 },
	[SANDBOX_OP_BIND] = { "--bind", 2 },
	[SANDBOX_OP_RO_BIND_TRY] = { "--ro-bind-try", 2 },
	[SANDBOX_OP_SYMLINK] = { "--symlink", 2 },
	[SANDBOX_OP_DEV] = { "--dev", 1 },
	[SANDBOX_OP_PROC] = { "--proc", 1 },
	[SANDBOX_OP_TMPFS] = { "--tmpfs", 1 },
	[SANDBOX_OP_MASK_FILE] = { "--ro-bind", 1 }, /* + "/dev/null" before a */
	[SANDBOX_OP_MASK_DIR] = { "--tmpfs", 1 },    /* + "--remount-ro" a after */
	[SANDBOX_OP_DIR] = { "--dir", 1 },
	[SANDBOX_OP_SECCOMP] = { "--seccomp", 1 },
	[SANDBOX_OP_CLEARENV] = { "--clearenv", 0 },
	[SANDBOX_OP_SETENV] = { "--setenv", 2 },
	[SANDBOX_OP_CHDIR] = { "--chdir", 1 },
	[SANDBOX_OP_RO_BIND_DATA] = { "--ro-bind-data", 2 },
	[SANDBOX_OP_HOME_TMPFS] = { "--tmpfs", 1 },
	[SANDBOX_OP_REMOUNT_RO] = { "--remount-ro", 1 },
};

/* One setup operation.  Strings owned. */
struct sandbox_op {
	enum sandbox_op_kind kind;
	char *a;
	char *b;
};

/* The operations built so far and where errors go. */
struct builder {
	const struct sandbox_config *cfg;
	struct sandbox_report *rep;
	struct sandbox_op *ops; /* owned */
	size_t nops, cap;
	char *err;
	size_t errlen;
};

/* Read-only inside whatever the policy says: relative to the workspace. */
static const char *const workspace_protections[] = {
	".airlock", ".git/hooks", ".git/config", ".vscode", ".idea", ".claude",
};

/* Read-only inside whatever the policy says: relative to home (matters only when home is writable). */
static const char *const home_protections[] = {
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
};

/* Merged-/usr links recreated when sandbox.read lists where they point (e.g. /lib64 -> usr/lib64). */
static const char *const usr_links[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };

/* The sandbox's own mount points: paths strictly inside them are bound after them. */
static const char *const own_mounts[] = { "/dev", "/proc", "/tmp", "/run" };

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int fail(struct builder *b, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Stores a message in the caller's buffer and returns e (a -errno). */
static int fail(struct builder *b, int e, const char *fmt, ...)
{
	va_list ap;
	if (b->err && b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

/* ---- the operation list ------------------------------------------------------ */

static int op_add(struct builder *b, enum sandbox_op_kind kind, const char *a, const char *bb)
{
	if (b->nops == b->cap) {
		struct sandbox_op *n = grow_array(b->ops, &b->cap, b->nops + 1, sizeof *n, 64);
		if (!n)
			return fail(b, -ENOMEM, "sandbox: out of memory");
		b->ops = n;
	}
	struct sandbox_op *op = &b->ops[b->nops];
	op->kind = kind;
	op->a = a ? strdup(a) : NULL;
	op->b = bb ? strdup(bb) : NULL;
	if ((a && !op->a) || (bb && !op->b)) {
		free(op->a);
		free(op->b);
		return fail(b, -ENOMEM, "sandbox: out of memory");
	}
	b->nops++;
	return 0;
}

static void ops_free(struct builder *b)
{
	for (size_t i = 0; i < b->nops; i++) {
		free(b->ops[i].a);
		free(b->ops[i].b);
	}
	free(b->ops);
	b->ops = NULL;
	b->nops = b->cap = 0;
}

/* ---- paths ------------------------------------------------------------------- */

/* True when path is dir or inside it (both canonical). */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The destination a mount operation covers, or NULL for operations that mount nothing. */
static const char *op_mount_dest(const struct sandbox_op *op)
{
	switch (op->kind) {
	case SANDBOX_OP_RO_BIND:
	case SANDBOX_OP_BIND:
	case SANDBOX_OP_RO_BIND_TRY:
		return op->b;
	case SANDBOX_OP_DEV:
	case SANDBOX_OP_PROC:
	case SANDBOX_OP_TMPFS:
	case SANDBOX_OP_HOME_TMPFS:
	case SANDBOX_OP_MASK_FILE:
	case SANDBOX_OP_MASK_DIR:
		return op->a;
	default:
		return NULL;
	}
}

/*
 * The operation whose mount decides what path shows inside the sandbox so
 * far: the last one whose destination is path or above it.  NULL: only
 * bwrap's empty root is there.
 */
static const struct sandbox_op *top_mount(const struct builder *b, const char *path)
{
	for (size_t i = b->nops; i-- > 0;) {
		const char *dest = op_mount_dest(&b->ops[i]);
		if (dest && path_within(path, dest))
			return &b->ops[i];
	}
	return NULL;
}

/* True when the host's path shows inside the sandbox (a bind is on top of it). */
static bool host_visible(const struct builder *b, const char *path)
{
	const struct sandbox_op *op = top_mount(b, path);
	return op && (op->kind == SANDBOX_OP_RO_BIND || op->kind == SANDBOX_OP_BIND ||
		      op->kind == SANDBOX_OP_RO_BIND_TRY);
}

/* True when the host's path is writable inside the sandbox (a read-write bind is on top). */
static bool host_writable(const struct builder *b, const char *path)
{
	const struct sandbox_op *op = top_mount(b, path);
	return op && op->kind == SANDBOX_OP_BIND;
}

/* True when path is one of the sandbox's own mount points: binding it would be covered at once. */
static bool is_own_mount(const char *path)
{
	for (size_t i = 0; i < NELEM(own_mounts); i++)
		if (strcmp(path, own_mounts[i]) == 0)
			return true;
	return false;
}

/* True when path lies strictly inside one of the sandbox's own mounts (/tmp/x, not /tmp). */
static bool inside_own_mount(const char *path)
{
	for (size_t i = 0; i < NELEM(own_mounts); i++)
		if (path_within(path, own_mounts[i]) && strcmp(path, own_mounts[i]) != 0)
			return true;
	return false;
}

/*
 * Expands a sandbox.read / sandbox.write entry as written: "~" and "~/x"
 * against home, "/x" as is, "." / "./x" and other relative paths against the
 * workspace (as policy_compile() expands file rules).  0 or -EINVAL /
 * -ENAMETOOLONG with a message.
 */
static int path_expand(struct builder *b, const char *key, const char *raw, char *out, size_t cap)
{
	const struct sandbox_config *cfg = b->cfg;
	const char *base = "", *rest = raw;
	if (raw[0] == '~') {
		if (raw[1] != '\0' && raw[1] != '/')
			return fail(b, -EINVAL, "sandbox.%s: '%s': only '~' and '~/' are understood", key,
				    raw);
		base = cfg->home;
		rest = raw + 1;
	} else if (raw[0] != '/') {
		base = cfg->workspace;
		rest = raw[0] == '.' && (raw[1] == '/' || raw[1] == '\0') ? raw + 1 : raw;
	}
	const char *sep = rest[0] && rest[0] != '/' ? "/" : "";
	int n = snprintf(out, cap, "%s%s%s", base, sep, rest);
	if (n < 0 || (size_t)n >= cap)
		return fail(b, -ENAMETOOLONG, "sandbox.%s: '%s' is too long", key, raw);
	return 0;
}

/*
 * Canonical form of an expanded path that exists: 1 when found (in canon,
 * PATH_MAX bytes), 0 when it does not exist or cannot be resolved (a path
 * left out only takes access away, so that is safe to skip).
 */
static int path_existing(const char *path, char *canon)
{
	return realpath(path, canon) ? 1 : 0;
}

/* A read or write path inside the session mount would pierce it (it is bound after it): refused. */
static int check_not_session(struct builder *b, const char *key, const char *canon)
{
	if (path_within(canon, RUN_SANDBOX_DIR))
		return fail(b, -EINVAL,
			    "sandbox.%s: '%s' is inside %s, airlock's session directory; remove it",
			    key, canon, RUN_SANDBOX_DIR);
	return 0;
}

/* True when a --symlink already creates dest. */
static bool has_symlink(const struct builder *b, const char *dest)
{
	for (size_t i = 0; i < b->nops; i++)
		if (b->ops[i].kind == SANDBOX_OP_SYMLINK && strcmp(b->ops[i].b, dest) == 0)
			return true;
	return false;
}

/* ---- namespaces and flags ----------------------------------------------------- */

static bool policy_has_network_rules(const struct policy *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].kind == POLICY_RULE_NETWORK)
			return true;
	return false;
}

/*
 * Namespaces: pid, ipc, uts, cgroup (when the kernel has it) always; user
 * when not root (bwrap is not setuid on Debian); net for network: none, and
 * for proxy unless the launcher already made the sandbox's own network
 * namespace (cfg->netns: bwrap then runs inside it and must not leave it).
 * --cap-drop ALL matters as root; unprivileged bwrap accepts it too (the
 * user namespace gives the sandbox no capabilities anyway).
 */
static int namespaces_add(struct builder *b)
{
	static const enum sandbox_op_kind always[] = {
		SANDBOX_OP_UNSHARE_PID, SANDBOX_OP_UNSHARE_IPC, SANDBOX_OP_UNSHARE_UTS,
		SANDBOX_OP_UNSHARE_CGROUP_TRY,
	};
	int r = op_add(b, SANDBOX_OP_DIE_WITH_PARENT, NULL, NULL);
	/*
	 * --new-session: no controlling terminal the agent could push input into
	 * (TIOCSTI; the seccomp filter refuses it too).  On a terminal airlock
	 * owns (the TUI's), the agent keeps it as its controlling terminal, so
	 * Ctrl-C typed into the output panel reaches it as SIGINT.
	 */
	if (!r && !b->cfg->own_tty)
		r = op_add(b, SANDBOX_OP_NEW_SESSION, NULL, NULL);
	for (size_t i = 0; i < NELEM(always) && !r; i++)
		r = op_add(b, always[i], NULL, NULL);
	if (!r && b->cfg->unprivileged)
		r = op_add(b, SANDBOX_OP_UNSHARE_USER, NULL, NULL);
	if (!r)
		r = op_add(b, SANDBOX_OP_CAP_DROP, "ALL", NULL);
	enum policy_network_mode net = b->cfg->policy->sandbox.network;
	if (!r && net != POLICY_NETWORK_HOST && !(net == POLICY_NETWORK_PROXY && b->cfg->netns)) {
		r = op_add(b, SANDBOX_OP_UNSHARE_NET, NULL, NULL);
		b->rep->network_rules_ignored = policy_has_network_rules(b->cfg->policy);
	}
	return r;
}

/* ---- the readable and writable trees ------------------------------------------ */

/*
 * Binds one read or write path (already canonical) at itself, if it belongs
 * to this pass: late = strictly inside one of the sandbox's own mounts.
 */
static int tree_bind(struct builder *b, const char *key, const char *canon, bool writable,
		     bool late)
{
	if (inside_own_mount(canon) != late || is_own_mount(canon))
		return 0;
	int r = check_not_session(b, key, canon);
	if (r)
		return r;
	/* already so inside (./ listed twice, /usr/lib under /usr): no second mount */
	if (writable ? host_writable(b, canon) : host_visible(b, canon))
		return 0;
	return op_add(b, writable ? SANDBOX_OP_BIND : SANDBOX_OP_RO_BIND, canon, canon);
}

/*
 * A read path that is itself a symlink in a canonical directory (/lib64 ->
 * usr/lib64) is recreated as that symlink, so programs find it where they
 * look; its target is bound by the caller.  Other symlinked paths show only
 * at their canonical place.
 */
static int read_link_add(struct builder *b, const char *expanded, const char *canon, bool late)
{
	char text[PATH_MAX], parent[PATH_MAX], pcanon[PATH_MAX];
	if (late || strcmp(expanded, canon) == 0)
		return 0;
	ssize_t n = readlink(expanded, text, sizeof text - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	snprintf(parent, sizeof parent, "%s", expanded);
	char *slash = strrchr(parent, '/');
	if (!slash)
		return 0;
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (!realpath(parent, pcanon) || strcmp(pcanon, parent) != 0 || has_symlink(b, expanded))
		return 0;
	return op_add(b, SANDBOX_OP_SYMLINK, text, expanded);
}

/*
 * What the sandbox shows of home when the whole file system is shown
 * (DESIGN.md "Contained by default"): the tools' caches, toolchains and
 * non-secret configuration, relative to home; the rest is absent.  Secrets
 * inside these trees are still masked (the mask walk descends them) and
 * refused by rules.  Left out on purpose: shell rc files (API keys are
 * exported there), ~/.local/share (keyrings, browsers' data), ~/.m2 and
 * ~/.gradle's property files (registry passwords), every credential store.
 */
static const char *const home_shown[] = {
	/* git */
	".gitconfig", ".gitignore", ".gitignore_global", ".gitattributes", ".config/git/config",
	".config/git/ignore", ".config/git/attributes",
	/* caches and package stores */
	".cache", ".npm", ".node-gyp", ".yarn", ".yarnrc", ".yarnrc.yml", ".config/yarn",
	".local/share/pnpm", ".pnpm-store", ".bun/bin", ".bun/install", ".deno",
	".cargo/bin", ".cargo/registry", ".cargo/git", ".cargo/config.toml", ".cargo/config",
	".cargo/env", ".rustup", "go", ".m2/repository", ".gradle/caches", ".gradle/wrapper",
	".ivy2/cache", ".sbt/boot", ".nuget/packages", ".cpan", ".gem/specs", ".gem/ruby",
	/* toolchains and version managers */
	".local/bin", ".local/lib", ".pyenv", ".rbenv", ".nvm", ".volta", ".fnm", ".asdf",
	".local/share/mise", ".config/mise", ".sdkman", ".jdks", ".conda", ".condarc",
	"miniconda3", "anaconda3", "miniforge3", ".local/share/uv", ".config/uv", ".local/pipx",
	".local/share/virtualenvs", ".npm-global", ".config/pip", ".pip", ".pydistutils.cfg",
	/* agent CLIs' installs (their state is their profile's: writable when it is in effect) */
	".local/share/claude", ".claude/local", ".codex/bin",
	/* editors' and terminals' harmless settings tools read */
	".editorconfig", ".inputrc", ".terminfo", ".config/nvim", ".vimrc", ".vim",
};

/* True when sandbox.read names home itself ("~"): the policy shows all of it. */
static bool read_names_home(struct builder *b, const char *home)
{
	const struct policy_sandbox *sb = &b->cfg->policy->sandbox;
	char path[PATH_MAX], canon[PATH_MAX];
	for (size_t i = 0; i < sb->nread; i++)
		if (path_expand(b, "read", sb->read[i], path, sizeof path) == 0 &&
		    path_existing(path, canon) && strcmp(canon, home) == 0)
			return true;
	return false;
}

/* True when a sandbox.write path is home or above it: home is writable, so shown whole. */
static bool write_covers_home(struct builder *b, const char *home)
{
	const struct policy_sandbox *sb = &b->cfg->policy->sandbox;
	char path[PATH_MAX], canon[PATH_MAX];
	for (size_t i = 0; i < sb->nwrite; i++)
		if (path_expand(b, "write", sb->write[i], path, sizeof path) == 0 &&
		    path_existing(path, canon) && path_within(home, canon))
			return true;
	return false;
}

/* Shows path (home/entry as written, its parents plain directories of the tmpfs) as its canonical target. */
static int home_entry_add(struct builder *b, const char *path)
{
	char canon[PATH_MAX];
	if (!path_existing(path, canon) || path_within(canon, RUN_SANDBOX_DIR))
		return 0;
	return op_add(b, SANDBOX_OP_RO_BIND, canon, path);
}

/*
 * Home as an allowlist: an empty tmpfs over it (read-only once every mount
 * below it is made: home_seal()), then each
 * home_shown entry that exists and each sandbox.read path under home,
 * read-only.  Home is shown whole when it is the workspace or inside it,
 * when a sandbox.write path covers it, when sandbox.read names "~", and when
 * it is "/" or one of the sandbox's own mounts (a home in /tmp is private
 * anyway).  The workspace, sandbox.write paths and a profile's state
 * directories under home are bound later, over the tmpfs.
 */
static int home_view_add(struct builder *b)
{
	const struct sandbox_config *cfg = b->cfg;
	const struct policy_sandbox *sb = &cfg->policy->sandbox;
	char home[PATH_MAX], path[PATH_MAX];
	if (!cfg->home || !path_existing(cfg->home, home) || strcmp(home, "/") == 0 ||
	    is_own_mount(home) || inside_own_mount(home) || path_within(home, cfg->workspace) ||
	    path_within(RUN_SANDBOX_DIR, home) || read_names_home(b, home) ||
	    write_covers_home(b, home))
		return 0;
	int r = op_add(b, SANDBOX_OP_HOME_TMPFS, home, NULL);
	for (size_t i = 0; i < NELEM(home_shown) && !r; i++) {
		int n = snprintf(path, sizeof path, "%s/%s", home, home_shown[i]);
		if (n > 0 && (size_t)n < sizeof path)
			r = home_entry_add(b, path);
	}
	for (size_t i = 0; i < sb->nread && !r; i++) {
		r = path_expand(b, "read", sb->read[i], path, sizeof path);
		if (!r && path_within(path, home) && strcmp(path, home) != 0)
			r = home_entry_add(b, path);
	}
	if (!r)
		b->rep->home_shown = true;
	return r;
}

/* The allowlist's tmpfs read-only, after every mount below it (bwrap makes their mount points in it). */
static int home_seal(struct builder *b)
{
	for (size_t i = 0; i < b->nops; i++)
		if (b->ops[i].kind == SANDBOX_OP_HOME_TMPFS)
			return op_add(b, SANDBOX_OP_REMOUNT_RO, b->ops[i].a, NULL);
	return 0;
}

/* True when a sandbox.read entry lies outside home ("~" and "~/..." do not): then the list is all the sandbox shows. */
static bool read_outside_home(struct builder *b)
{
	const struct policy_sandbox *sb = &b->cfg->policy->sandbox;
	char path[PATH_MAX], home[PATH_MAX];
	bool have_home = b->cfg->home && path_existing(b->cfg->home, home);
	for (size_t i = 0; i < sb->nread; i++) {
		if (path_expand(b, "read", sb->read[i], path, sizeof path) != 0)
			return true; /* reported when the list is walked */
		if (!have_home || !path_within(path, home))
			return true;
	}
	return false;
}

/*
 * sandbox.read entries.  With none outside home (none at all, or only
 * "~/..." paths), the whole file system read-only, home as an allowlist
 * (home_view_add()); else the entries alone.
 */
static int read_tree_add(struct builder *b, bool late)
{
	const struct policy_sandbox *sb = &b->cfg->policy->sandbox;
	char path[PATH_MAX], canon[PATH_MAX];
	if (!read_outside_home(b)) {
		if (late)
			return 0;
		int r = op_add(b, SANDBOX_OP_RO_BIND, "/", "/");
		return r ? r : home_view_add(b);
	}
	for (size_t i = 0; i < sb->nread; i++) {
		int r = path_expand(b, "read", sb->read[i], path, sizeof path);
		if (r)
			return r;
		if (!path_existing(path, canon))
			continue;
		if ((r = tree_bind(b, "read", canon, false, late)) ||
		    (r = read_link_add(b, path, canon, late)))
			return r;
	}
	return 0;
}

/* Recreates /bin, /lib64, ... as symlinks when they are ones on the host and their target shows. */
static int usr_links_add(struct builder *b)
{
	char text[PATH_MAX], canon[PATH_MAX];
	if (b->cfg->policy->sandbox.nread == 0)
		return 0;
	for (size_t i = 0; i < NELEM(usr_links); i++) {
		const char *link = usr_links[i];
		ssize_t n = readlink(link, text, sizeof text - 1);
		if (n <= 0 || top_mount(b, link) || has_symlink(b, link) || !realpath(link, canon) ||
		    !host_visible(b, canon))
			continue;
		text[n] = '\0';
		int r = op_add(b, SANDBOX_OP_SYMLINK, text, link);
		if (r)
			return r;
	}
	return 0;
}

/* The workspace and each existing sandbox.write path, read-write. */
static int write_tree_add(struct builder *b, bool late)
{
	const struct policy_sandbox *sb = &b->cfg->policy->sandbox;
	char path[PATH_MAX], canon[PATH_MAX];
	int r = tree_bind(b, "workspace", b->cfg->workspace, true, late);
	for (size_t i = 0; i < sb->nwrite && !r; i++) {
		r = path_expand(b, "write", sb->write[i], path, sizeof path);
		if (!r && path_existing(path, canon))
			r = tree_bind(b, "write", canon, true, late);
	}
	return r;
}

/*
 * Private /dev, /proc, /tmp and /run; the session directory read-only at
 * /run/airlock, and the shim bound over its empty mount point there (the
 * session directory may sit on a noexec file system).
 */
static int own_mounts_add(struct builder *b)
{
	int r = op_add(b, SANDBOX_OP_DEV, "/dev", NULL);
	if (!r)
		r = op_add(b, SANDBOX_OP_PROC, "/proc", NULL);
	if (!r)
		r = op_add(b, SANDBOX_OP_TMPFS, "/tmp", NULL);
	if (!r)
		r = op_add(b, SANDBOX_OP_TMPFS, "/run", NULL);
	if (!r)
		r = op_add(b, SANDBOX_OP_RO_BIND, b->cfg->session_dir, RUN_SANDBOX_DIR);
	if (!r && b->cfg->shim_path)
		r = op_add(b, SANDBOX_OP_RO_BIND, b->cfg->shim_path,
			   RUN_SANDBOX_DIR "/" RUN_SHIM_NAME);
	if (!r && b->cfg->landlock_path)
		r = op_add(b, SANDBOX_OP_RO_BIND, b->cfg->landlock_path,
			   RUN_SANDBOX_DIR "/" RUN_LANDLOCK_NAME);
	return r;
}

/* ---- protections: read-only inside, whatever the policy says ------------------------ */

/*
 * Binds dir/name read-only over itself when it exists and is writable inside
 * (elsewhere it is read-only already).  The canonical path is used: bwrap
 * would follow a symlink at the destination anyway.  Paths that do not exist
 * cannot be protected by a mount (the agent may create them; the shim's
 * write rules are the layer for that).
 */
static int protect_add(struct builder *b, const char *dir, const char *name)
{
	char path[PATH_MAX], canon[PATH_MAX];
	int n = name ? snprintf(path, sizeof path, "%s/%s", dir, name)
		     : snprintf(path, sizeof path, "%s", dir);
	if (n < 0 || (size_t)n >= sizeof path || !path_existing(path, canon))
		return 0;
	if (!host_writable(b, canon))
		return 0;
	return op_add(b, SANDBOX_OP_RO_BIND, canon, canon);
}

/*
 * The session copies (copies.h): each working copy bound read-write over its
 * real path (a missing one has a placeholder by now), .git's object store
 * and refs bound through, read-only binds of what is not copied; the
 * copies' own store hidden.  The paths bound are the copies' as given:
 * their places are inside the workspace or home, not symlinks (copies.c
 * binds a symlinked one read-only at its canonical path).
 */
static int copies_add(struct builder *b)
{
	const struct sandbox_config *cfg = b->cfg;
	int r = 0;
	for (size_t i = 0; i < cfg->ncopy_binds && !r; i++) {
		const struct copy_bind *cb = &cfg->copy_binds[i];
		r = op_add(b, cb->ro ? SANDBOX_OP_RO_BIND : SANDBOX_OP_BIND, cb->src, cb->dest);
	}
	for (const char *const *h = cfg->copy_hidden; h && *h && !r; h++) {
		char canon[PATH_MAX];
		if (path_existing(*h, canon) && host_visible(b, canon))
			r = op_add(b, SANDBOX_OP_MASK_DIR, canon, NULL);
	}
	/* the checkpoints (launcher/checkpoint/store.h): what the workspace was, out of reach */
	char canon[PATH_MAX];
	if (!r && cfg->checkpoint_root && path_existing(cfg->checkpoint_root, canon) &&
	    host_visible(b, canon))
		r = op_add(b, SANDBOX_OP_MASK_DIR, canon, NULL);
	return r;
}

static int protections_add(struct builder *b)
{
	const struct sandbox_config *cfg = b->cfg;
	/* with session copies, only .airlock is left to a read-only bind (the first entry) */
	size_t nws = cfg->copy_hidden ? 1 : NELEM(workspace_protections);
	int r = copies_add(b);
	for (size_t i = 0; i < nws && !r; i++)
		r = protect_add(b, cfg->workspace, workspace_protections[i]);
	for (size_t i = 0; i < NELEM(home_protections) && !r; i++)
		r = protect_add(b, cfg->home, home_protections[i]);
	/* last: inside .airlock/ (the usual place) it is read-only already and needs no mount */
	if (!r && cfg->policy_file)
		r = protect_add(b, cfg->policy_file, NULL);
	/* the audit log, wherever --log put it: the agent may not touch it */
	if (!r && cfg->log_file)
		r = protect_add(b, cfg->log_file, NULL);
	return r;
}

/* ---- masks ------------------------------------------------------------------------- */

static bool target_visible(void *ctx, const char *canon)
{
	return host_visible(ctx, canon);
}

static bool target_below(void *ctx, const char *canon)
{
	const struct builder *b = ctx;
	for (size_t i = 0; i < b->nops; i++) {
		const struct sandbox_op *op = &b->ops[i];
		if ((op->kind == SANDBOX_OP_RO_BIND || op->kind == SANDBOX_OP_BIND) &&
		    path_within(op->b, canon) && strcmp(op->b, canon) != 0 && host_visible(b, op->b))
			return true;
	}
	return false;
}

/* A credential store directly in home, where home is an allowlist's tmpfs: masked there all the same. */
static bool target_placeholder(void *ctx, const char *canon)
{
	const struct builder *b = ctx;
	const struct sandbox_op *op = top_mount(b, canon);
	if (!op || op->kind != SANDBOX_OP_HOME_TMPFS)
		return false;
	size_t n = strlen(op->a);
	return strncmp(canon, op->a, n) == 0 && canon[n] == '/' && !strchr(canon + n + 1, '/');
}

/* /dev/null over a file (or any non-directory), a read-only empty tmpfs over a directory. */
static int target_mask(void *ctx, const char *canon, bool is_dir)
{
	return op_add(ctx, is_dir ? SANDBOX_OP_MASK_DIR : SANDBOX_OP_MASK_FILE, canon, NULL);
}

/*
 * True when canon is exactly what a sandbox.read or sandbox.write entry
 * names, made canonical: a unix socket there stays reachable (a directory
 * entry does not keep the sockets below it).
 */
static bool target_named(void *ctx, const char *canon)
{
	struct builder *b = ctx;
	const struct policy_sandbox *sb = &b->cfg->policy->sandbox;
	char path[PATH_MAX], c[PATH_MAX];
	for (size_t i = 0; i < sb->nread + sb->nwrite; i++) {
		bool rd = i < sb->nread;
		const char *raw = rd ? sb->read[i] : sb->write[i - sb->nread];
		if (path_expand(b, rd ? "read" : "write", raw, path, sizeof path) == 0 &&
		    path_existing(path, c) && strcmp(c, canon) == 0)
			return true;
	}
	return false;
}

/*
 * Where services put their sockets when "/" is shown whole (the sandbox's
 * own /run, /tmp and /dev replace the usual places): the system's state
 * (/var: postfix, libvirt, lxd, snap's, a database's), service and add-on
 * trees, other users' homes, mounted media.  Walking all of "/" instead
 * cost 40 ms a launch on a developer's machine (its source trees).
 */
static const char *const socket_places[] = { "/var", "/srv", "/opt", "/home", "/mnt", "/media" };

/*
 * The socket walk (masks.h masks_sockets()) over the host trees the
 * sandbox shows: the destination of each bind of a host path at itself
 * (the read tree, the write tree, protections; for "/", socket_places);
 * the workspace and home (walked by masks_apply()) and the session
 * directory (the sandbox's own, shown at RUN_SANDBOX_DIR) not descended.
 */
static int sockets_add(struct builder *b, const struct masks_target *t)
{
	const char **roots = calloc(b->nops + NELEM(socket_places) + 1, sizeof *roots);
	const char *done[] = { b->cfg->workspace, b->cfg->home, b->cfg->session_dir, NULL };
	char home[PATH_MAX], failing[PATH_MAX];
	size_t n = 0;
	int e = 0;
	if (!roots)
		return fail(b, -ENOMEM, "sandbox: out of memory");
	if (realpath(b->cfg->home, home))
		done[1] = home;
	for (size_t i = 0; i < b->nops; i++) {
		const struct sandbox_op *op = &b->ops[i];
		if (!((op->kind == SANDBOX_OP_RO_BIND || op->kind == SANDBOX_OP_BIND ||
		       op->kind == SANDBOX_OP_RO_BIND_TRY) && strcmp(op->a, op->b) == 0))
			continue;
		if (strcmp(op->b, "/") != 0) {
			roots[n++] = op->b;
			continue;
		}
		for (size_t k = 0; k < NELEM(socket_places); k++)
			roots[n++] = socket_places[k];
	}
	struct masks_report sr;
	enum masks_result r = masks_sockets(roots, n, done, t, &sr, failing, &e);
	free(roots);
	b->rep->sockets += sr.sockets;
	b->rep->sockets_capped = sr.capped;
	b->rep->sockets_walked = sr.walked;
	if (r == MASKS_OK)
		return 0;
	return fail(b, e < 0 ? e : -ENOMEM, "sandbox: cannot mask the socket %s: %s", failing,
		    masks_result_text(r));
}

/*
 * What deny-read rules and the mandatory list name, and the host's unix
 * sockets, hidden (masks.h); after every bind, so nothing re-exposes them.
 */
static int masks_add(struct builder *b)
{
	const struct masks_target t = { .visible = target_visible, .mask = target_mask,
					.below = target_below, .named = target_named,
					.placeholder = target_placeholder, .ctx = b };
	struct masks_report mr;
	char failing[PATH_MAX];
	int e = 0;
	enum masks_result r = masks_apply(b->cfg->img, b->cfg->workspace, b->cfg->home, &t, &mr,
					  failing, &e);
	b->rep->masks = mr.masks - mr.sockets;
	b->rep->sockets = mr.sockets;
	b->rep->masks_capped = mr.capped;
	b->rep->walked = mr.walked;
	if (r == MASKS_OK)
		return sockets_add(b, &t);
	return fail(b, e < 0 ? e : -ENOMEM, "sandbox: cannot mask %s: %s", failing,
		    masks_result_text(r));
}

/* ---- the process: seccomp, environment, directory ------------------------------------ */

static int seccomp_add(struct builder *b)
{
	char fd[16];
	if (b->cfg->seccomp_fd < 0)
		return 0;
	snprintf(fd, sizeof fd, "%d", b->cfg->seccomp_fd);
	return op_add(b, SANDBOX_OP_SECCOMP, fd, NULL);
}

/* --clearenv, then cfg->env exactly: nothing of bwrap's own environment reaches the agent. */
static int env_add(struct builder *b)
{
	int r = op_add(b, SANDBOX_OP_CLEARENV, NULL, NULL);
	for (char *const *e = b->cfg->env; e && *e && !r; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e)
			return fail(b, -EINVAL, "sandbox: environment entry '%s' is not NAME=VALUE", *e);
		char *name = strndup(*e, (size_t)(eq - *e));
		if (!name)
			return fail(b, -ENOMEM, "sandbox: out of memory");
		r = op_add(b, SANDBOX_OP_SETENV, name, eq + 1);
		free(name);
	}
	return r;
}

/* The sandbox's resolver: cfg->resolv_fd's text over /etc/resolv.conf (where it really lives). */
static int resolv_add(struct builder *b)
{
	char fd[16];
	if (b->cfg->resolv_fd < 0 || !b->cfg->netns)
		return 0;
	snprintf(fd, sizeof fd, "%d", b->cfg->resolv_fd);
	return op_add(b, SANDBOX_OP_RO_BIND_DATA, fd, b->cfg->resolv_path);
}

/*
 * The sandbox's hosts file: cfg->hosts_fd's text over /etc/hosts (where it
 * really lives), unless the sandbox shares the host's network (network:
 * host), where the host's names are the ones its network answers to.
 */
static int hosts_add(struct builder *b)
{
	char fd[16];
	if (b->cfg->hosts_fd < 0 || b->cfg->policy->sandbox.network == POLICY_NETWORK_HOST)
		return 0;
	snprintf(fd, sizeof fd, "%d", b->cfg->hosts_fd);
	return op_add(b, SANDBOX_OP_RO_BIND_DATA, fd,
		      b->cfg->hosts_path ? b->cfg->hosts_path : "/etc/hosts");
}

/* A host name hosts(5) can carry: RFC 1123 letters, digits, '-', '.'; not localhost. */
static bool plain_hostname(const char *h)
{
	size_t n = h ? strlen(h) : 0;
	if (n == 0 || n > 253 || h[0] == '-' || h[0] == '.' || strcasecmp(h, "localhost") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)h[i]) && h[i] != '-' && h[i] != '.')
			return false;
	return true;
}

int sandbox_hosts_text(const char *hostname, char *buf, size_t cap)
{
	bool named = plain_hostname(hostname);
	int n = snprintf(buf, cap,
			 "# airlock: the sandbox's own hosts file, loopback names only; every other\n"
			 "# name is answered by the sandbox's resolver (see /etc/resolv.conf)\n"
			 "127.0.0.1\tlocalhost%s%s\n"
			 "::1\tlocalhost ip6-localhost ip6-loopback%s%s\n",
			 named ? " " : "", named ? hostname : "", named ? " " : "", named ? hostname : "");
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}

static int process_add(struct builder *b)
{
	int r = resolv_add(b);
	if (!r)
		r = hosts_add(b);
	if (!r)
		r = seccomp_add(b);
	if (!r)
		r = env_add(b);
	if (!r)
		r = op_add(b, SANDBOX_OP_CHDIR, b->cfg->cwd, NULL);
	return r;
}

/* ---- the Landlock ruleset's writable places ------------------------------------------- */

/*
 * True when an operation mounts something writable at its destination: a
 * read-write bind, bwrap's /dev (devices such as /dev/null are opened for
 * writing), /proc (bwrap mounts it read-write, its dangerous parts
 * read-only) and a tmpfs (/tmp, /run).  A mask's tmpfs is read-only.
 */
static bool op_writable(const struct sandbox_op *op)
{
	return op->kind == SANDBOX_OP_BIND || op->kind == SANDBOX_OP_DEV ||
	       op->kind == SANDBOX_OP_PROC || op->kind == SANDBOX_OP_TMPFS;
}

/*
 * The places the mounts leave writable, for the helper's -w: each writable
 * mount's destination that no later mount covers (one at or above it), and
 * that is not inside another one already listed.  out holds b->nops
 * pointers (borrowed from the operations); returns how many were set.
 */
static size_t landlock_writable(const struct builder *b, const char **out)
{
	size_t n = 0;
	for (size_t i = 0; i < b->nops; i++) {
		const char *dest = op_mount_dest(&b->ops[i]);
		bool keep = dest && op_writable(&b->ops[i]);
		for (size_t j = i + 1; keep && j < b->nops; j++) {
			const char *later = op_mount_dest(&b->ops[j]);
			keep = !later || !path_within(dest, later);
		}
		for (size_t k = 0; keep && k < n; k++)
			keep = !path_within(dest, out[k]);
		if (!keep)
			continue;
		/* a listed one inside this one goes: this one covers it */
		size_t m = 0;
		for (size_t k = 0; k < n; k++)
			if (!path_within(out[k], dest))
				out[m++] = out[k];
		n = m;
		out[n++] = dest;
	}
	return n;
}

/* ---- rendering ------------------------------------------------------------------------ */

/* How many argv slots an operation takes. */
static size_t op_width(const struct sandbox_op *op)
{
	if (op->kind == SANDBOX_OP_MASK_FILE)
		return 3; /* --ro-bind /dev/null P */
	if (op->kind == SANDBOX_OP_MASK_DIR)
		return 4; /* --tmpfs P --remount-ro P */
	return 1 + op_syntax[op->kind].nargs;
}

/* Appends a copy of s at argv[*n]; false when out of memory. */
static bool put(char **argv, size_t *n, const char *s)
{
	argv[*n] = strdup(s);
	return argv[(*n)++] != NULL;
}

static bool op_render(const struct sandbox_op *op, char **argv, size_t *n)
{
	if (op->kind == SANDBOX_OP_MASK_FILE)
		return put(argv, n, "--ro-bind") && put(argv, n, "/dev/null") &&
		       put(argv, n, op->a);
	if (op->kind == SANDBOX_OP_MASK_DIR)
		return put(argv, n, "--tmpfs") && put(argv, n, op->a) &&
		       put(argv, n, "--remount-ro") && put(argv, n, op->a);
	unsigned k = op_syntax[op->kind].nargs;
	return put(argv, n, op_syntax[op->kind].option) && (k < 1 || put(argv, n, op->a)) &&
	       (k < 2 || put(argv, n, op->b));
}

/*
 * The Landlock helper's part after bwrap's "--": its path inside, --abi N,
 * "-r /", "-w W" per writable place, "--".  Returns false when out of memory.
 */
static bool landlock_render(const struct builder *b, const char **writable, size_t nw,
			    char **argv, size_t *n)
{
	char abi[16], fd[16];
	snprintf(abi, sizeof abi, "%d", b->cfg->landlock_abi);
	snprintf(fd, sizeof fd, "%d", b->cfg->checkpoint_fd);
	bool ok = put(argv, n, RUN_SANDBOX_DIR "/" RUN_LANDLOCK_NAME) && put(argv, n, "--abi") &&
		  put(argv, n, abi);
	if (ok && b->cfg->checkpoint_fd >= 0)
		ok = put(argv, n, "--notify") && put(argv, n, fd);
	if (b->cfg->landlock_abi < 1)
		return ok && put(argv, n, "--");
	ok = ok && put(argv, n, "-r") && put(argv, n, "/");
	for (size_t i = 0; ok && i < nw; i++)
		ok = put(argv, n, "-w") && put(argv, n, writable[i]);
	return ok && put(argv, n, "--");
}

/*
 * The one pass from operations to argv: bwrap, the operations, then "--",
 * the Landlock helper's part when there is one, the program's absolute path
 * and argv[1..].  bwrap 0.8 has no --argv0, so the agent's argv[0] is the
 * program's path, not the name it was given as.
 */
static int render(struct builder *b, const char *bwrap_path, char ***argv_out)
{
	const struct sandbox_config *cfg = b->cfg;
	size_t total = 3, n = 0, nw = 0; /* bwrap, "--", program */
	const char **writable = NULL;
	if (cfg->landlock_path) {
		if (!(writable = calloc(b->nops + 1, sizeof *writable)))
			return fail(b, -ENOMEM, "sandbox: out of memory");
		nw = landlock_writable(b, writable);
		total += 8 + 2 * nw; /* helper --abi N [--notify FD] -r / (-w W)... -- */
	}
	for (size_t i = 0; i < b->nops; i++)
		total += op_width(&b->ops[i]);
	for (size_t i = 1; cfg->argv && cfg->argv[0] && cfg->argv[i]; i++)
		total++;
	char **argv = calloc(total + 1, sizeof *argv);
	bool ok = argv && put(argv, &n, bwrap_path);
	for (size_t i = 0; ok && i < b->nops; i++)
		ok = op_render(&b->ops[i], argv, &n);
	ok = ok && put(argv, &n, "--");
	if (ok && cfg->landlock_path)
		ok = landlock_render(b, writable, nw, argv, &n);
	free(writable);
	ok = ok && put(argv, &n, cfg->program);
	for (size_t i = 1; ok && cfg->argv && cfg->argv[0] && cfg->argv[i]; i++)
		ok = put(argv, &n, cfg->argv[i]);
	if (!ok) {
		sandbox_argv_free(argv);
		return fail(b, -ENOMEM, "sandbox: out of memory");
	}
	*argv_out = argv;
	return 0;
}

/* ---- entry points ---------------------------------------------------------------------- */

static bool absolute(const char *p)
{
	return p && p[0] == '/';
}

static int config_check(struct builder *b, const char *bwrap_path)
{
	const struct sandbox_config *c = b->cfg;
	struct stat st;
	if (!c->policy || !c->img || !bwrap_path)
		return fail(b, -EINVAL, "sandbox: no policy, image or bwrap path given");
	if (!absolute(c->home) || !absolute(c->workspace) || !absolute(c->cwd) ||
	    !absolute(c->session_dir) || !absolute(c->program))
		return fail(b, -EINVAL,
			    "sandbox: home, workspace, cwd, session dir and program must be absolute paths");
	if (c->policy_file && !absolute(c->policy_file))
		return fail(b, -EINVAL, "sandbox: policy file '%s' is not absolute", c->policy_file);
	if (c->log_file && !absolute(c->log_file))
		return fail(b, -EINVAL, "sandbox: audit log '%s' is not absolute", c->log_file);
	if (c->shim_path && !absolute(c->shim_path))
		return fail(b, -EINVAL, "sandbox: shim '%s' is not absolute", c->shim_path);
	if (c->landlock_path && (!absolute(c->landlock_path) ||
				 (c->landlock_abi < 1 && c->checkpoint_fd < 0)))
		return fail(b, -EINVAL, "sandbox: Landlock helper '%s' is not absolute or has no ABI",
			    c->landlock_path);
	if (stat(c->workspace, &st) != 0 || !S_ISDIR(st.st_mode))
		return fail(b, -ENOENT, "sandbox: workspace '%s' is not a directory", c->workspace);
	return 0;
}

/* Every builder, in the order their mounts must stack (see the layout at the top). */
static int build_all(struct builder *b)
{
	int r = namespaces_add(b);
	if (!r)
		r = read_tree_add(b, false);
	if (!r)
		r = usr_links_add(b);
	if (!r)
		r = write_tree_add(b, false);
	if (!r)
		r = own_mounts_add(b);
	if (!r)
		r = read_tree_add(b, true);
	if (!r)
		r = write_tree_add(b, true);
	if (!r)
		r = protections_add(b);
	if (!r)
		r = masks_add(b);
	if (!r)
		r = home_seal(b);
	if (!r)
		r = process_add(b);
	return r;
}

int sandbox_build(const struct sandbox_config *cfg, const char *bwrap_path, char ***argv_out,
		  struct sandbox_report *rep, char *err, size_t errlen)
{
	struct sandbox_report scratch;
	struct builder b = { .cfg = cfg, .rep = rep ? rep : &scratch, .err = err, .errlen = errlen };
	memset(b.rep, 0, sizeof *b.rep);
	*argv_out = NULL;
	int r = config_check(&b, bwrap_path);
	if (!r)
		r = build_all(&b);
	if (!r)
		r = render(&b, bwrap_path, argv_out);
	ops_free(&b);
	return r;
}

void sandbox_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}
