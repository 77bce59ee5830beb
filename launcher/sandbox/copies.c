/* copies.c — session copies of runs-later paths (copies.h): made at launch, bound over the real paths, applied back or kept aside at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/termtext.h"
#include "launcher/log/audit.h"
#include "launcher/sandbox/copies.h"
#include "policy/policy.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct copy_spec builtin[] = {
	{ "./.git", true, COPY_GIT_DIR, NULL },
	{ "./.claude", true, COPY_KEEP_ASIDE, NULL },
	{ "./.codex", true, COPY_KEEP_ASIDE, NULL },
	{ "./.gemini", true, COPY_KEEP_ASIDE, NULL },
	{ "./.vscode", true, COPY_KEEP_ASIDE, NULL },
	{ "./.idea", true, COPY_KEEP_ASIDE, NULL },
	{ "./.cursor", true, COPY_KEEP_ASIDE, NULL },
	{ "./.devcontainer", true, COPY_KEEP_ASIDE, NULL },
	{ "./.mcp.json", false, COPY_KEEP_ASIDE, NULL },
	{ "./.envrc", false, COPY_KEEP_ASIDE, NULL },
	/* git hooks kept in the work tree: husky's (core.hooksPath .husky/_ runs .husky/NAME),
	   pre-commit's (.pre-commit-config.yaml: `repo: local` hooks run any `entry` command at
	   the next commit where pre-commit is installed) */
	{ "./.husky", true, COPY_KEEP_ASIDE, NULL },
	{ "./.pre-commit-config.yaml", false, COPY_KEEP_ASIDE, NULL },
	/* tool configuration that runs code on ordinary use, not only an install: npm's
	   node-options (--require FILE), script-shell; Yarn Berry's yarnPath (the JS file run as
	   yarn itself); pnpm's .pnpmfile.cjs (hooks loaded by every install); Cargo's
	   .cargo/config.toml (build.rustc-wrapper, target runners, aliases); mise's config
	   ([hooks] enter, [env] _.source, tasks); Emacs's .dir-locals.el (eval forms); Vim's and
	   Neovim's exrc files (.exrc, .vimrc, .nvimrc, .nvim.lua: Ex commands, Lua).
	   Not .tool-versions: it names versions, no commands. */
	{ "./.npmrc", false, COPY_KEEP_ASIDE, NULL },
	{ "./.yarnrc.yml", false, COPY_KEEP_ASIDE, NULL },
	{ "./.pnpmfile.cjs", false, COPY_KEEP_ASIDE, NULL },
	{ "./.cargo", true, COPY_KEEP_ASIDE, NULL },
	{ "./mise.toml", false, COPY_KEEP_ASIDE, NULL },
	{ "./.mise.toml", false, COPY_KEEP_ASIDE, NULL },
	{ "./.dir-locals.el", false, COPY_KEEP_ASIDE, NULL },
	{ "./.exrc", false, COPY_KEEP_ASIDE, NULL },
	{ "./.vimrc", false, COPY_KEEP_ASIDE, NULL },
	{ "./.nvimrc", false, COPY_KEEP_ASIDE, NULL },
	{ "./.nvim.lua", false, COPY_KEEP_ASIDE, NULL },
	/* other agents' and editors' project configuration: MCP servers they start, hooks and
	   tasks they run, rules they obey: Amazon Q (.amazonq/mcp.json, rules/), Roo Code
	   (.roo/mcp.json, rules), Kiro (.kiro/settings/mcp.json, hooks/, steering/), Zed
	   (.zed/settings.json context_servers, tasks.json), Continue (.continue/mcpServers/),
	   Windsurf (.windsurf/rules/, workflows/), aider (.aider.conf.yml: test-cmd, lint-cmd run
	   with auto-test/auto-lint), Cline (.clinerules/: rules, workflows, hooks/ scripts; a
	   .clinerules file, the older form, is bound read-only) */
	{ "./.amazonq", true, COPY_KEEP_ASIDE, NULL },
	{ "./.roo", true, COPY_KEEP_ASIDE, NULL },
	{ "./.kiro", true, COPY_KEEP_ASIDE, NULL },
	{ "./.zed", true, COPY_KEEP_ASIDE, NULL },
	{ "./.continue", true, COPY_KEEP_ASIDE, NULL },
	{ "./.windsurf", true, COPY_KEEP_ASIDE, NULL },
	{ "./.clinerules", true, COPY_KEEP_ASIDE, NULL },
	{ "./.aider.conf.yml", false, COPY_KEEP_ASIDE, NULL },
};

/* .git's subdirectories bound straight through (read-write): data, not code. */
static const char *const git_through[] = { "objects", "refs", "logs", "lfs", "rr-cache",
					   "branches" };
/* .git's subdirectories copied and applied back file by file: data, small (exclude, sparse-checkout, attributes). */
static const char *const git_applied[] = { "info" };
/* .git's subdirectories bound read-only: other repositories' git dirs with their own hooks and config. */
static const char *const git_readonly[] = { "modules", "worktrees" };
/* .git's top-level files applied back when changed (besides [A-Z_]+ names: HEAD, ORIG_HEAD, ...). */
static const char *const git_safe_files[] = { "index", "packed-refs", "description", "shallow" };

/*
 * Git config keys whose changes are applied (lowercase; "s.*" a whole
 * section): what `git init`, `git config user.*`, `git branch
 * --set-upstream-to`, `git checkout -b --track` write (and core.hooksPath
 * set to exactly /dev/null: hooks off; branch.*.remote and pushremote only
 * naming a remote the launch config has: git_change_safe()).  Everything else
 * (core.fsmonitor, core.hooksPath, core.sshCommand, core.pager, alias.*,
 * filter.*, diff.*.textconv, credential.*, include*.path, remote.*, gpg.*...)
 * runs or names a program somewhere: kept aside.
 */
static const char *const git_safe_keys[] = {
	"user.*", "branch.*", "core.repositoryformatversion", "core.filemode", "core.bare",
	"core.logallrefupdates", "core.ignorecase", "core.precomposeunicode", "core.symlinks",
	"init.defaultbranch", "extensions.objectformat", "pull.rebase", "pull.ff",
	"push.default", "push.autosetupremote",
};

/* COPY_TOP_SCRIPTS: one top-level file as it was at launch. */
struct top_rec {
	char *name;
	struct stat st;
	bool snap; /* its content is in the item's snap/NAME */
};

struct item {
	struct copy_spec spec;
	char *host;  /* the real path */
	char *label; /* workspace/REL, home/REL or root/ABS: its place under kept/ID/ */
	char *work;  /* the working copy */
	char *snap;  /* the launch snapshot (a missing file: empty, as its placeholder) */
	char *init;  /* a file missing at launch: what its copy started as ("{}" for JSON) */
	bool existed;
	bool ro_only;             /* bound read-only at itself: no copy */
	bool through[NELEM(git_through)]; /* COPY_GIT_DIR: that subdirectory was bound through */
	struct top_rec *tops;     /* COPY_TOP_SCRIPTS: the top-level files at launch */
	size_t ntops, captops;
};

struct nested_rec;

/* An event of a killed session's sweep, waiting for this session's log. */
struct deferred {
	char *event, *file, *kept, *what;
};

struct placeholder {
	char *path;
	bool dir;
	dev_t dev;
	ino_t ino;
};

struct copies {
	char *state;   /* STATE */
	char *dir;     /* STATE/sessions/ID */
	char *kept;    /* STATE/kept/ID */
	char *hidden_store[3];
	const char *hidden[3];
	char *id;
	struct item *items;
	size_t nitems, capitems;
	struct copy_bind *binds;
	char **bind_strings; /* owned strings the binds point to */
	size_t nbinds, capbinds, nstrings, capstrings;
	struct placeholder *ph;
	size_t nph, capph;
	struct audit_log *log;
	struct copies_result *res;
	char *exclude_block; /* lines added to .git/info/exclude's copy: the placeholder files, or NULL */
	char *ph_env;        /* "AIRLOCK_PLACEHOLDERS=NAME:...:/WORKSPACE", or NULL */
	char *hooks_path;    /* "./REL": the hooks directory core.hooksPath names, copied; or NULL */
	struct nested_rec *nr; /* runs-later files below the top level at launch, sorted by rel */
	size_t nnr, capnr;
	char *nested_root;     /* the workspace walked, or NULL */
	bool nested_capped;    /* the launch walk stopped at its bounds */
	unsigned nested_walked;
	struct copies *defer_to; /* a killed session's sweep: its events wait in this one */
	struct deferred *deferred;
	size_t ndeferred, capdeferred;
	char *msg;
	size_t msglen;
	FILE *msgf;
	bool said_header;
	copies_host_fn host_hook; /* told before each host path copies_finish() changes, or NULL */
	void *host_ctx;
};

static int failf(char *err, size_t errlen, int e, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int failf(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;
	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

static char *joinf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A malloc'ed formatted string, NULL when out of memory. */
static char *joinf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

const struct copy_spec *copies_builtin(size_t *n)
{
	*n = NELEM(builtin);
	return builtin;
}

/* ---- files ------------------------------------------------------------------------- */

/* Copies the regular file src to dst (created or replaced) with src's mode.  0 or -errno. */
static int copy_file(const char *src, const char *dst)
{
	struct stat st;
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -errno;
	if (fstat(in, &st) != 0) {
		int e = errno;
		close(in);
		return -e;
	}
	unlink(dst);
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 07777);
	if (out < 0) {
		int e = errno;
		close(in);
		return -e;
	}
	int r = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				r = w < 0 ? -errno : -EIO;
				break;
			}
			off += w;
		}
		if (r)
			break;
	}
	fchmod(out, st.st_mode & 07777);
	if (close(out) != 0 && !r)
		r = -errno;
	close(in);
	return r;
}

/* Copies src (file, symlink or directory tree) to dst, which must not exist.  0 or -errno. */
static int copy_tree(const char *src, const char *dst)
{
	struct stat st;
	if (lstat(src, &st) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		char text[PATH_MAX];
		ssize_t n = readlink(src, text, sizeof text - 1);
		if (n < 0)
			return -errno;
		text[n] = '\0';
		return symlink(text, dst) == 0 ? 0 : -errno;
	}
	if (S_ISREG(st.st_mode))
		return copy_file(src, dst);
	if (!S_ISDIR(st.st_mode))
		return 0; /* sockets, fifos, devices: not copied */
	if (mkdir(dst, (st.st_mode & 07777) | 0700) != 0 && errno != EEXIST)
		return -errno;
	DIR *d = opendir(src);
	if (!d)
		return -errno;
	int r = 0;
	struct dirent *de;
	while (!r && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *s = joinf("%s/%s", src, de->d_name), *t = joinf("%s/%s", dst, de->d_name);
		r = s && t ? copy_tree(s, t) : -ENOMEM;
		free(s);
		free(t);
	}
	closedir(d);
	return r;
}

/* Removes path and everything under it (no symlink followed).  Errors ignored. */
static void remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *s = joinf("%s/%s", path, de->d_name);
			if (s)
				remove_tree(s);
			free(s);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* mkdir -p with mode 0700 for what it makes.  0 or -errno. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0700) == 0 || errno == EEXIST ? 0 : -errno;
}

/*
 * The state of a path, to compare: 0 absent, 1 regular file, 2 symlink, 3
 * directory, 4 other.
 */
static int kind_of(const char *path, struct stat *st)
{
	if (lstat(path, st) != 0)
		return 0;
	return S_ISREG(st->st_mode) ? 1 : S_ISLNK(st->st_mode) ? 2 : S_ISDIR(st->st_mode) ? 3 : 4;
}

/* True when a and b are the same: both absent, equal files (content and mode) or symlinks, or both directories. */
static bool same(const char *a, const char *b)
{
	struct stat sa, sb;
	int ka = kind_of(a, &sa), kb = kind_of(b, &sb);
	if (ka != kb)
		return false;
	if (ka == 0 || ka == 3 || ka == 4)
		return true;
	if (ka == 2) {
		char ta[PATH_MAX], tb[PATH_MAX];
		ssize_t na = readlink(a, ta, sizeof ta), nb = readlink(b, tb, sizeof tb);
		return na == nb && na >= 0 && memcmp(ta, tb, (size_t)na) == 0;
	}
	if (sa.st_size != sb.st_size || (sa.st_mode & 0111) != (sb.st_mode & 0111))
		return false;
	int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
	bool eq = fa >= 0 && fb >= 0;
	char ba[65536], bb[65536];
	while (eq) {
		ssize_t na = read(fa, ba, sizeof ba), nb = read(fb, bb, sizeof bb);
		if (na != nb || na < 0 || memcmp(ba, bb, (size_t)na) != 0)
			eq = false;
		if (na <= 0)
			break;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return eq;
}

/* Creates an empty file (mode 0644).  0 or -errno. */
static int touch_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Creates path holding text (mode 0644).  0 or -errno. */
static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	int r = write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return r;
}

/* Tells the hook (the checkpoint) that copies_finish() is about to change or make the host path. */
static void host_touch(struct copies *c, const char *host)
{
	if (c && c->host_hook && host)
		c->host_hook(c->host_ctx, host);
}

void copies_set_host_hook(struct copies *c, copies_host_fn fn, void *ctx)
{
	if (c) {
		c->host_hook = fn;
		c->host_ctx = ctx;
	}
}

/* Replaces dst by a copy of src through a temporary file and rename(2) (the host's, no mount on it now).  0 or -errno. */
static int install(const char *src, const char *dst)
{
	char *tmp = joinf("%s.airlock-tmp", dst);
	if (!tmp)
		return -ENOMEM;
	int r = copy_tree(src, tmp);
	if (!r && rename(tmp, dst) != 0)
		r = -errno;
	if (r)
		remove_tree(tmp);
	free(tmp);
	return r;
}

/* ---- bookkeeping ------------------------------------------------------------------- */

static int bind_add(struct copies *c, const char *src, const char *dest, bool ro)
{
	char *s = strdup(src), *d = strdup(dest);
	struct copy_bind *nb = c->nbinds == c->capbinds
				       ? grow_array(c->binds, &c->capbinds, c->nbinds + 1, sizeof *nb, 16)
				       : c->binds;
	if (nb)
		c->binds = nb;
	char **ns = c->nstrings + 2 > c->capstrings
			    ? grow_array(c->bind_strings, &c->capstrings, c->nstrings + 2, sizeof *ns, 32)
			    : c->bind_strings;
	if (ns)
		c->bind_strings = ns;
	if (!s || !d || !nb || !ns) {
		free(s);
		free(d);
		return -ENOMEM;
	}
	c->bind_strings[c->nstrings++] = s;
	c->bind_strings[c->nstrings++] = d;
	c->binds[c->nbinds++] = (struct copy_bind){ .src = s, .dest = d, .ro = ro };
	return 0;
}

/* Makes path (and its missing parents) as a placeholder: an empty directory, or an empty file when !dir. */
static int placeholder_make(struct copies *c, const char *path, bool dir)
{
	char parent[PATH_MAX];
	struct stat st;
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (lstat(parent, &st) != 0) {
			int r = placeholder_make(c, parent, true);
			if (r)
				return r;
		} else if (!S_ISDIR(st.st_mode)) {
			return -ENOTDIR;
		}
	}
	int fd = -1;
	if (dir ? mkdir(path, 0755) != 0
		: (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
		return -errno;
	if (fd >= 0)
		close(fd);
	if (lstat(path, &st) != 0)
		return -errno;
	struct placeholder *n = c->nph == c->capph
					? grow_array(c->ph, &c->capph, c->nph + 1, sizeof *n, 16)
					: c->ph;
	if (!n)
		return -ENOMEM;
	c->ph = n;
	c->ph[c->nph++] = (struct placeholder){ .path = strdup(path), .dir = dir, .dev = st.st_dev,
						.ino = st.st_ino };
	/* written down too, for the next launch to remove if this one is killed (stale_sweep()) */
	char *list = joinf("%s/placeholders", c->dir);
	FILE *f = list ? fopen(list, "ae") : NULL;
	if (f) {
		fprintf(f, "%c %llu %llu %s\n", dir ? 'd' : 'f', (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino, path);
		fclose(f);
	}
	free(list);
	return c->ph[c->nph - 1].path ? 0 : -ENOMEM;
}

/* Removes path when it is still the empty placeholder (dir or file) with that device and inode. */
static void placeholder_remove(const char *path, bool dir, dev_t dev, ino_t ino)
{
	struct stat st;
	if (lstat(path, &st) != 0 || st.st_dev != dev || st.st_ino != ino)
		return;
	if (dir)
		rmdir(path); /* fails when not empty: then it stays */
	else if (S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

static void nested_sweep(struct copies *nc, const char *store, const char *id);
static void nested_launch(struct copies *c, const char *root);

/* One stale store: its placeholders removed (the last made first), nested files swept, then the store itself. */
static void stale_remove(struct copies *c, const char *store, const char *id)
{
	char *list = joinf("%s/placeholders", store);
	FILE *f = list ? fopen(list, "re") : NULL;
	char **lines = NULL, buf[PATH_MAX + 64];
	size_t n = 0, cap = 0;
	while (f && fgets(buf, sizeof buf, f)) {
		char **nl = n == cap ? grow_array(lines, &cap, n + 1, sizeof *nl, 16) : lines;
		if (!nl)
			break;
		lines = nl;
		buf[strcspn(buf, "\n")] = '\0';
		if (!(lines[n] = strdup(buf)))
			break;
		n++;
	}
	if (f)
		fclose(f);
	for (size_t i = n; i-- > 0;) {
		char kind;
		unsigned long long dev, ino;
		int off = 0;
		if (sscanf(lines[i], "%c %llu %llu %n", &kind, &dev, &ino, &off) == 3 && off > 0 &&
		    lines[i][off] == '/')
			placeholder_remove(lines[i] + off, kind == 'd', (dev_t)dev, (ino_t)ino);
		free(lines[i]);
	}
	free(lines);
	free(list);
	nested_sweep(c, store, id);
	remove_tree(store);
}

/*
 * The stores of sessions whose launcher died without its end (SIGKILL):
 * each whose launcher.pid names a process that no longer exists.  Their
 * empty placeholders go (the planted content never reached the real paths);
 * a store without a readable launcher.pid, or whose launcher runs, stays.
 */
static void stale_sweep(struct copies *c, const char *sessions)
{
	DIR *d = opendir(sessions);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strspn(de->d_name, "0123456789abcdef") != 16 || de->d_name[16])
			continue;
		char *pidf = joinf("%s/%s/launcher.pid", sessions, de->d_name);
		FILE *f = pidf ? fopen(pidf, "re") : NULL;
		long pid = 0;
		if (f && fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
		if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			char *store = joinf("%s/%s", sessions, de->d_name);
			if (store)
				stale_remove(c, store, de->d_name);
			free(store);
		}
		free(pidf);
	}
	if (d)
		closedir(d);
}

/* Removes the placeholders still empty and still ours, the last made first. */
static void placeholders_remove(struct copies *c)
{
	for (size_t i = c->nph; i-- > 0;) {
		struct placeholder *p = &c->ph[i];
		if (p->path)
			placeholder_remove(p->path, p->dir, p->dev, p->ino);
		free(p->path);
	}
	free(c->ph);
	c->ph = NULL;
	c->nph = c->capph = 0;
}

/* ---- launch ------------------------------------------------------------------------ */

/* STATE: $XDG_STATE_HOME/airlock when absolute, else HOME/.local/state/airlock. */
static char *state_dir(const char *home)
{
	const char *x = getenv("XDG_STATE_HOME");
	if (x && x[0] == '/')
		return joinf("%s/airlock", x);
	return joinf("%s/.local/state/airlock", home);
}

/* The host path of a spec's path, and its label under kept/ID/.  0 or -EINVAL. */
static int spec_paths(const struct copies_config *cfg, const char *p, char **host, char **label)
{
	if (p[0] == '.' && p[1] == '/' && p[2]) {
		*host = joinf("%s/%s", cfg->workspace, p + 2);
		*label = joinf("workspace/%s", p + 2);
	} else if (p[0] == '~' && p[1] == '/' && p[2]) {
		*host = joinf("%s/%s", cfg->home, p + 2);
		*label = joinf("home/%s", p + 2);
	} else if (p[0] == '/' && p[1]) {
		*host = strdup(p);
		*label = joinf("root%s", p);
	} else {
		return -EINVAL;
	}
	return *host && *label ? 0 : -ENOMEM;
}

/*
 * The placeholder files (.mcp.json, .envrc... missing at launch) would show
 * as untracked in `git status` inside, and `git add -A` would commit them:
 * the .git copy's info/exclude lists them; the block is taken out again
 * before info/exclude is compared with its snapshot and applied back.
 */
static int exclude_add(struct copies *c, const struct item *it)
{
	const char *base[] = { it->work };
	for (size_t i = 0; i < 1; i++) {
		char *dir = joinf("%s/info", base[i]), *f = joinf("%s/info/exclude", base[i]);
		FILE *out = NULL;
		if (dir && f && (mkdir(dir, 0755) == 0 || errno == EEXIST))
			out = fopen(f, "ae");
		if (out) {
			fputs(c->exclude_block, out);
			if (fclose(out) != 0)
				out = NULL;
		}
		free(dir);
		free(f);
		if (!out)
			return -EIO;
	}
	return 0;
}

/* The exclude block of the workspace's file specs missing at launch (placeholders), or none. */
static int exclude_block_make(struct copies *c, const struct copies_config *cfg)
{
	size_t total = NELEM(builtin) + cfg->nextra;
	for (size_t i = 0; i < total; i++) {
		const struct copy_spec *s = i < NELEM(builtin) ? &builtin[i] : &cfg->extra[i - NELEM(builtin)];
		struct stat st;
		if (s->dir || strncmp(s->path, "./", 2) != 0 || strchr(s->path + 2, '/'))
			continue;
		char *h = joinf("%s/%s", cfg->workspace, s->path + 2);
		bool missing = h && lstat(h, &st) != 0;
		free(h);
		if (!missing)
			continue;
		char *n = joinf("%s/%s\n", c->exclude_block ? c->exclude_block
				: "\n# airlock: this session's placeholders, not in your repository\n",
				s->path + 2);
		if (!n)
			return -ENOMEM;
		free(c->exclude_block);
		c->exclude_block = n;
	}
	return 0;
}

static int git_prepare(struct copies *c, struct item *it)
{
	int r = 0;
	if (!it->existed)
		return bind_add(c, it->work, it->host, false);
	if ((r = mkdir_p(it->snap)) != 0)
		return r;
	DIR *d = opendir(it->host);
	if (!d)
		return -errno;
	struct dirent *de;
	while (!r && (de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		size_t k = 0;
		while (k < NELEM(git_through) && strcmp(n, git_through[k]))
			k++;
		bool ro = false;
		for (size_t j = 0; j < NELEM(git_readonly); j++)
			ro = ro || !strcmp(n, git_readonly[j]);
		char *src = joinf("%s/%s", it->host, n), *w = joinf("%s/%s", it->work, n),
		     *s = joinf("%s/%s", it->snap, n);
		struct stat st;
		if (!src || !w || !s)
			r = -ENOMEM;
		else if ((k < NELEM(git_through) || ro) && lstat(src, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (k < NELEM(git_through))
				it->through[k] = true;
			r = mkdir(w, 0755) == 0 ? 0 : -errno; /* the mount point in the copy */
		} else if (!(r = copy_tree(src, w))) {
			r = copy_tree(src, s);
		}
		free(src);
		free(w);
		free(s);
	}
	closedir(d);
	if (!r && c->exclude_block)
		r = exclude_add(c, it);
	if (!r)
		r = bind_add(c, it->work, it->host, false);
	for (size_t k = 0; !r && k < NELEM(git_through); k++)
		if (it->through[k]) {
			char *p = joinf("%s/%s", it->host, git_through[k]);
			r = p ? bind_add(c, p, p, false) : -ENOMEM;
			free(p);
		}
	for (size_t j = 0; !r && j < NELEM(git_readonly); j++) {
		char *p = joinf("%s/%s", it->host, git_readonly[j]);
		struct stat st;
		if (!p)
			r = -ENOMEM;
		else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			r = bind_add(c, p, p, true);
		free(p);
	}
	return r;
}

#define TOP_SNAP_MAX 65536

/* COPY_TOP_SCRIPTS at launch: each file (regular or symlink) directly in it->host recorded, small ones copied. */
static int top_prepare(struct item *it)
{
	DIR *d = opendir(it->host);
	struct dirent *de;
	if (!d)
		return 0; /* missing: every file found at the end is new */
	if (mkdir(it->snap, 0700) != 0 && errno != EEXIST) {
		closedir(d);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		struct top_rec *n = it->ntops == it->captops
					    ? grow_array(it->tops, &it->captops, it->ntops + 1, sizeof *n, 16)
					    : it->tops;
		if (!n)
			break;
		it->tops = n;
		struct top_rec *t = &it->tops[it->ntops];
		*t = (struct top_rec){ .name = strdup(de->d_name), .st = st };
		if (!t->name)
			break;
		it->ntops++;
		char *src = joinf("%s/%s", it->host, de->d_name), *dst = joinf("%s/%s", it->snap, de->d_name);
		if (src && dst && S_ISREG(st.st_mode) && st.st_size <= TOP_SNAP_MAX)
			t->snap = copy_file(src, dst) == 0;
		free(src);
		free(dst);
	}
	closedir(d);
	return 0;
}

static int item_prepare(struct copies *c, struct item *it, char *err, size_t errlen)
{
	struct stat st;
	int r = 0;
	if (it->spec.apply == COPY_TOP_SCRIPTS) {
		if ((r = top_prepare(it)) != 0)
			return failf(err, errlen, r, "cannot record %s: %s", it->host, strerror(-r));
		return 0;
	}
	int k = kind_of(it->host, &st);
	it->existed = k != 0;
	/* a symlink, a .git file (gitdir: pointer), a file where a directory is expected: read-only */
	if (k == 2 || k == 4 || (k == 1 && it->spec.dir) || (k == 3 && !it->spec.dir)) {
		it->ro_only = true;
		char canon[PATH_MAX];
		if (!realpath(it->host, canon))
			return 0; /* a dangling symlink: nothing to bind */
		return bind_add(c, canon, canon, true);
	}
	if (!it->existed && (r = placeholder_make(c, it->host, it->spec.dir)) != 0)
		return failf(err, errlen, r, "cannot make the placeholder %s: %s", it->host,
			     strerror(-r));
	if (it->spec.apply == COPY_GIT_DIR) {
		if (mkdir(it->work, 0755) != 0)
			return failf(err, errlen, -errno, "cannot make %s: %s", it->work, strerror(errno));
		r = git_prepare(c, it);
	} else if (it->existed) {
		r = copy_tree(it->host, it->work);
		if (!r)
			r = copy_tree(it->host, it->snap);
		if (!r)
			r = bind_add(c, it->work, it->host, false);
	} else if (it->spec.dir) {
		r = mkdir(it->work, 0755) == 0 ? 0 : -errno;
		if (!r)
			r = bind_add(c, it->work, it->host, false);
	} else {
		/* a JSON file starts as an empty object, which its programs read as "nothing yet" */
		const char *text = it->spec.apply == COPY_JSON_KEYS ? "{}\n" : "";
		r = write_text(it->init, text);
		if (!r)
			r = write_text(it->work, text);
		if (!r)
			r = touch_file(it->snap);
		if (!r)
			r = bind_add(c, it->work, it->host, false);
	}
	if (r)
		return failf(err, errlen, r, "cannot copy %s for the session: %s", it->host,
			     strerror(-r));
	return 0;
}

/* Adds and prepares one spec (c->items has room for it). */
static int item_add(struct copies *c, const struct copies_config *cfg, const struct copy_spec *s,
		    char *err, size_t errlen)
{
	struct item *it = &c->items[c->nitems];
	it->spec = *s;
	int r = spec_paths(cfg, s->path, &it->host, &it->label);
	if (r) {
		c->nitems++;
		return failf(err, errlen, r, "copies: '%s' is not ./REL, ~/REL or an absolute path",
			     s->path);
	}
	it->work = joinf("%s/%zu/work", c->dir, c->nitems);
	it->snap = joinf("%s/%zu/snap", c->dir, c->nitems);
	it->init = joinf("%s/%zu/init", c->dir, c->nitems);
	char *n = joinf("%s/%zu", c->dir, c->nitems);
	c->nitems++;
	if (!it->work || !it->snap || !it->init || !n || mkdir(n, 0700) != 0) {
		free(n);
		return failf(err, errlen, -ENOMEM, "cannot make the session's copies in %s", c->dir);
	}
	free(n);
	return item_prepare(c, it, err, errlen);
}

static int run_git(char *const *argv, char **out, size_t *len);

/*
 * The workspace's hooks directory when the repository at its top names one
 * inside it (core.hooksPath in .git/config: husky's .husky/_, a hooks/ kept
 * in the tree): "./REL" (malloc'ed), or NULL (none, outside the workspace,
 * inside .git, or where a copy already is: in one, or over one).
 */
static char *hooks_spec_path(const struct copies *c, const char *workspace, const char *home)
{
	char *conf = joinf("%s/.git/config", workspace), *text = NULL, *val = NULL, *full = NULL;
	char canon[PATH_MAX], *rel = NULL;
	struct stat st;
	size_t len = 0;
	if (!conf || lstat(conf, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	FILE *f = fopen(conf, "re");
	if (f) {
		char buf[8192];
		size_t n;
		FILE *m = open_memstream(&text, &len);
		while (m && (n = fread(buf, 1, sizeof buf, f)) > 0)
			fwrite(buf, 1, n, m);
		if (m)
			fclose(m);
		fclose(f);
	}
	if (!text || !strcasestr(text, "hookspath")) /* most repositories: no git started */
		goto out;
	char *argv[] = { "git", "config", "--file", conf, "--get", "core.hooksPath", NULL };
	if (run_git(argv, &val, &len) != 0 || !val)
		goto out;
	val[strcspn(val, "\n")] = '\0';
	if (!val[0])
		goto out;
	if (val[0] == '/')
		full = strdup(val);
	else if (val[0] == '~' && val[1] == '/')
		full = joinf("%s/%s", home, val + 2);
	else
		full = joinf("%s/%s", workspace, val);
	if (!full)
		goto out;
	if (realpath(full, canon)) {
		free(full);
		full = strdup(canon);
	} else if (strstr(full, "/./") || strstr(full, "/../") || strstr(full, "//")) {
		goto out; /* missing and not plain: not guessed at */
	}
	size_t wl = strlen(workspace), fl = full ? strlen(full) : 0;
	while (fl > wl + 1 && full[fl - 1] == '/')
		full[--fl] = '\0';
	if (!full || strncmp(full, workspace, wl) != 0 || full[wl] != '/' || !full[wl + 1])
		goto out;
	const char *r = full + wl + 1;
	if (!strcmp(r, ".git") || !strncmp(r, ".git/", 5))
		goto out; /* the .git copy has it */
	for (size_t i = 0; i < c->nitems; i++) {
		const char *h = c->items[i].host;
		size_t hl = strlen(h);
		if ((!strncmp(full, h, hl) && (full[hl] == '/' || !full[hl])) ||
		    (!strncmp(h, full, fl) && h[fl] == '/'))
			goto out;
	}
	rel = joinf("./%s", r);
out:
	free(conf);
	free(text);
	free(val);
	free(full);
	return rel;
}

/*
 * Adds the specs: the built-in list less the paths an extra spec names,
 * then the extras, then the hooks directory core.hooksPath names in the
 * workspace (hooks_spec_path()).
 */
static int items_add(struct copies *c, const struct copies_config *cfg, char *err, size_t errlen)
{
	size_t total = NELEM(builtin) + cfg->nextra;
	c->items = calloc(total + 1, sizeof *c->items);
	if (!c->items)
		return failf(err, errlen, -ENOMEM, "out of memory");
	for (size_t i = 0; i < total; i++) {
		const struct copy_spec *s = i < NELEM(builtin) ? &builtin[i] : &cfg->extra[i - NELEM(builtin)];
		bool replaced = false;
		for (size_t j = 0; i < NELEM(builtin) && j < cfg->nextra; j++)
			replaced = replaced || !strcmp(cfg->extra[j].path, s->path);
		if (replaced)
			continue;
		int r = item_add(c, cfg, s, err, errlen);
		if (r)
			return r;
	}
	if ((c->hooks_path = hooks_spec_path(c, cfg->workspace, cfg->home))) {
		const struct copy_spec hs = { c->hooks_path, true, COPY_KEEP_ASIDE, NULL };
		return item_add(c, cfg, &hs, err, errlen);
	}
	return 0;
}

/* The names AIRLOCK_PLACEHOLDERS carries at most: the shim's bound (preload/hook_dir.c MAX_NAMES). */
#define PH_ENV_MAX_NAMES 64

/*
 * The shim's list of this session's placeholders in the workspace's top
 * level (the names, then the workspace), for it to leave them out of
 * listings while they are empty (preload/hook_dir.c).  None: NULL.
 */
static int ph_env_make(struct copies *c, const char *workspace)
{
	size_t wl = strlen(workspace), named = 0;
	char *acc = NULL;
	for (size_t i = 0; i < c->nph && named < PH_ENV_MAX_NAMES; i++) {
		const char *p = c->ph[i].path;
		if (strncmp(p, workspace, wl) != 0 || p[wl] != '/' || !p[wl + 1] ||
		    strchr(p + wl + 1, '/') || strchr(p + wl + 1, ':'))
			continue;
		named++;
		char *n = joinf("%s%s:", acc ? acc : "AIRLOCK_PLACEHOLDERS=", p + wl + 1);
		free(acc);
		if (!(acc = n))
			return -ENOMEM;
	}
	if (acc) {
		c->ph_env = joinf("%s%s", acc, workspace);
		free(acc);
		if (!c->ph_env)
			return -ENOMEM;
	}
	return 0;
}

int copies_prepare(const struct copies_config *cfg, struct copies **out, char *err, size_t errlen)
{
	*out = NULL;
	struct copies *c = calloc(1, sizeof *c);
	if (!c || !(c->state = state_dir(cfg->home)) || !(c->id = strdup(cfg->session_id)) ||
	    !(c->dir = joinf("%s/sessions/%s", c->state, cfg->session_id)) ||
	    !(c->kept = joinf("%s/kept/%s", c->state, cfg->session_id)) ||
	    !(c->hidden_store[0] = joinf("%s/sessions", c->state)) ||
	    !(c->hidden_store[1] = joinf("%s/kept", c->state))) {
		copies_free(c);
		return failf(err, errlen, -ENOMEM, "out of memory");
	}
	stale_sweep(c, c->hidden_store[0]);
	int r = mkdir_p(c->dir);
	if (!r)
		r = mkdir_p(c->hidden_store[1]);
	char *pidf = joinf("%s/launcher.pid", c->dir);
	FILE *pf = pidf && !r ? fopen(pidf, "we") : NULL;
	if (pf) {
		fprintf(pf, "%ld\n", (long)getpid());
		if (fclose(pf) != 0)
			r = -EIO;
	} else if (!r) {
		r = -EIO;
	}
	free(pidf);
	if (r) {
		failf(err, errlen, r, "cannot make %s: %s", c->dir, strerror(-r));
		copies_free(c);
		return r;
	}
	c->hidden[0] = c->hidden_store[0];
	c->hidden[1] = c->hidden_store[1];
	if ((r = exclude_block_make(c, cfg)) != 0 || (r = items_add(c, cfg, err, errlen)) != 0 ||
	    (r = ph_env_make(c, cfg->workspace)) != 0) {
		if (r == -ENOMEM)
			failf(err, errlen, r, "out of memory");
		copies_free(c);
		return r;
	}
	nested_launch(c, cfg->workspace);
	*out = c;
	return 0;
}

const char *copies_placeholder_env(const struct copies *c)
{
	return c ? c->ph_env : NULL;
}

const struct copy_bind *copies_binds(const struct copies *c, size_t *n)
{
	*n = c ? c->nbinds : 0;
	return c ? c->binds : NULL;
}

const char *const *copies_hidden(const struct copies *c)
{
	return c->hidden;
}

/* ---- the end: events, keeping aside ------------------------------------------------ */

static void note(struct copies *c, const char *event, const char *path, const char *kept,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* One audit event (copy_applied / kept_aside) and, kept aside, one line of the user's message. */
static void note(struct copies *c, const char *event, const char *path, const char *kept,
		 const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	bool aside = !strcmp(event, AUDIT_KEPT_ASIDE);
	if (c->defer_to) {
		struct copies *d = c->defer_to;
		struct deferred *n = d->ndeferred == d->capdeferred
					     ? grow_array(d->deferred, &d->capdeferred, d->ndeferred + 1,
							  sizeof *n, 8)
					     : d->deferred;
		if (!n)
			return;
		d->deferred = n;
		n[d->ndeferred++] = (struct deferred){ .event = strdup(event), .file = strdup(path),
						       .kept = kept ? strdup(kept) : NULL,
						       .what = strdup(what) };
		return;
	}
	struct audit_event ev = { .source = AUDIT_SOURCE_LAUNCHER, .pid = getpid(), .event = event,
				  .file = path, .kept = kept, .response_time_ms = -1,
				  .message = what };
	if (c->log)
		(void)audit_write(c->log, &ev);
	if (aside)
		c->res->kept++;
	else
		c->res->applied++;
	if (!aside || !c->msgf)
		return;
	if (!c->said_header) {
		fprintf(c->msgf, "airlock: kept aside, not applied to your files (they run or are obeyed "
				 "later, outside the sandbox):\n");
		c->said_header = true;
	}
	/* names the agent chose: their control characters must not drive the user's terminal */
	fputs("  ", c->msgf);
	termtext_put_text(c->msgf, path);
	fputs(": ", c->msgf);
	termtext_put_text(c->msgf, what);
	if (kept) {
		fputs("\n      kept in ", c->msgf);
		termtext_put_text(c->msgf, kept);
	}
	fputc('\n', c->msgf);
}

/* Copies src to kept/ID/LABEL[/rel]; returns that path (malloc'ed), or NULL when it could not. */
static char *keep(struct copies *c, const struct item *it, const char *rel, const char *src)
{
	char *dst = rel && rel[0] ? joinf("%s/%s/%s", c->kept, it->label, rel)
				  : joinf("%s/%s", c->kept, it->label);
	if (!dst)
		return NULL;
	char *slash = strrchr(dst, '/');
	*slash = '\0';
	int r = mkdir_p(dst);
	*slash = '/';
	remove_tree(dst);
	if (r || copy_tree(src, dst) != 0) {
		free(dst);
		return NULL;
	}
	return dst;
}

/* Keeps src aside and says so (what: why). */
static void keep_note(struct copies *c, const struct item *it, const char *rel, const char *src,
		      const char *host, const char *what)
{
	char *k = keep(c, it, rel, src);
	note(c, AUDIT_KEPT_ASIDE, host, k, "%s%s", what, k ? "" : " (could not be kept: lost)");
	free(k);
}

/* Applies src to host (parents made), or keeps it aside when that fails. */
static void apply_note(struct copies *c, const struct item *it, const char *rel, const char *src,
		       const char *host, const char *what)
{
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", host);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	int r = mkdir_p(parent);
	host_touch(c, host);
	if (!r)
		r = install(src, host);
	if (r) {
		char why[256];
		snprintf(why, sizeof why, "%s; could not be applied: %s", what, strerror(-r));
		keep_note(c, it, rel, src, host, why);
		return;
	}
	note(c, AUDIT_COPY_APPLIED, host, NULL, "%s", what);
}

static bool is_sample(const char *name)
{
	size_t n = strlen(name);
	return n > 7 && !strcmp(name + n - 7, ".sample");
}

/* What diff_tree() does with a change. */
enum diff_mode {
	DIFF_KEEP,    /* new, changed or deleted: kept aside (deleted: said, left on the host) */
	DIFF_SAMPLES, /* as DIFF_KEEP, but a new *.sample file the host lacks is applied (never runs) */
	DIFF_APPLY,   /* applied, unless the host's changed meanwhile: then kept aside */
};

/*
 * info/exclude's copy less the placeholders' block copies_prepare() added,
 * as a file in the session directory (malloc'ed path; unlink and free it),
 * or NULL for any other file.
 */
static char *unblocked(struct copies *c, const char *rel, const char *w)
{
	char *text = NULL, *tmp = NULL, *at;
	size_t len = 0;
	FILE *f;
	if (strcmp(rel, "info/exclude") != 0 || !c->exclude_block ||
	    !(tmp = joinf("%s/exclude.tmp", c->dir)) || !(f = fopen(w, "re"))) {
		free(tmp);
		return NULL;
	}
	FILE *out = open_memstream(&text, &len);
	char buf[4096];
	size_t n;
	while (out && (n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, out);
	fclose(f);
	if (out)
		fclose(out);
	if (text && (at = strstr(text, c->exclude_block)))
		memmove(at, at + strlen(c->exclude_block), strlen(at + strlen(c->exclude_block)) + 1);
	unlink(tmp);
	if (!text || write_text(tmp, text) != 0) {
		free(tmp);
		tmp = NULL;
	}
	free(text);
	return tmp;
}

/*
 * The entries of snap (a launch state) gone from work (the session's copy):
 * with apply, each deletion reaches host when may (a name's test; NULL: any
 * name) allows it and host's entry is still the launch version, a regular
 * file; a vital name (NULL: none) is never deleted; the rest is said left on
 * the host.
 */
static void deletions(struct copies *c, const char *work, const char *snap, const char *host,
		      bool apply, bool (*may)(const char *), bool (*vital)(const char *))
{
	DIR *d = opendir(snap);
	struct dirent *de;
	struct stat st;
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		char *w = joinf("%s/%s", work, n), *s = joinf("%s/%s", snap, n),
		     *h = joinf("%s/%s", host, n);
		if (w && s && h && kind_of(w, &st) == 0) {
			if (vital && vital(n))
				note(c, AUDIT_KEPT_ASIDE, h, NULL, "deleted in the session; not applied, "
				     "the launch version stays (git cannot use a repository without it)");
			else if (apply && (!may || may(n)) && kind_of(s, &st) == 1 && same(h, s) &&
				 (host_touch(c, h), unlink(h) == 0))
				note(c, AUDIT_COPY_APPLIED, h, NULL, "deleted in the session; deleted");
			else
				note(c, AUDIT_KEPT_ASIDE, h, NULL, "deleted in the session; left on the host");
		}
		free(w);
		free(s);
		free(h);
	}
	if (d)
		closedir(d);
}

/*
 * Compares the tree work with snap (its launch state) under rel, host the
 * real one, and does with each change what mode says.
 */
static void diff_tree(struct copies *c, const struct item *it, const char *rel, const char *work,
		      const char *snap, const char *host, enum diff_mode mode)
{
	DIR *d = opendir(work);
	struct dirent *de;
	struct stat st;
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		char *w = joinf("%s/%s", work, n), *s = joinf("%s/%s", snap, n),
		     *h = joinf("%s/%s", host, n), *r = rel[0] ? joinf("%s/%s", rel, n) : strdup(n);
		char *u = w && r && mode == DIFF_APPLY ? unblocked(c, r, w) : NULL;
		const char *wu = u ? u : w; /* what the host would get */
		if (w && s && h && r) {
			int kw = kind_of(w, &st), ks = kind_of(s, &st);
			if (kw == 3 && (ks == 3 || ks == 0))
				diff_tree(c, it, r, w, s, h, mode);
			else if (same(wu, s))
				;
			else if (mode == DIFF_SAMPLES && ks == 0 && kw == 1 && is_sample(n) &&
				 kind_of(h, &st) == 0)
				apply_note(c, it, r, w, h, "a new sample hook (never runs)");
			else if (mode == DIFF_APPLY && kw == 1 && same(h, s))
				apply_note(c, it, r, wu, h, "changed in the session; applied");
			else if (mode == DIFF_APPLY)
				keep_note(c, it, r, w, h, "changed in the session and on the host meanwhile");
			else
				keep_note(c, it, r, w, h, ks == 0 ? "made in the session" : "changed in the session");
		}
		if (u)
			unlink(u);
		free(u);
		free(w);
		free(s);
		free(h);
		free(r);
	}
	if (d)
		closedir(d);
	deletions(c, work, snap, host, mode == DIFF_APPLY, NULL, NULL);
}

/* A tree made in the session (git's objects/, refs/... after `git init`): copied where the host has nothing; the rest kept aside. */
static void merge_new(struct copies *c, const struct item *it, const char *rel, const char *work,
		      const char *host, unsigned *copied)
{
	DIR *d = opendir(work);
	struct dirent *de;
	struct stat st;
	if (!d)
		return;
	mkdir_p(host);
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		char *w = joinf("%s/%s", work, n), *h = joinf("%s/%s", host, n),
		     *r = joinf("%s/%s", rel, n);
		if (w && h && r) {
			int kw = kind_of(w, &st), kh = kind_of(h, &st);
			if (kw == 3 && (kh == 3 || kh == 0))
				merge_new(c, it, r, w, h, copied);
			else if (kw == 1 && kh == 0 && (host_touch(c, h), copy_tree(w, h) == 0))
				(*copied)++;
			else if (!same(w, h))
				keep_note(c, it, r, w, h, "made in the session; the host has another");
		}
		free(w);
		free(h);
		free(r);
	}
	closedir(d);
}

/* ---- git config files ------------------------------------------------------------- */

struct kv {
	char *key;
	char *val; /* NULL: a key without "=" (true) */
};

/*
 * Runs git with argv (argv[0] "git") outside any repository: cwd /, no
 * system or global config.  Its stdout in *out (malloc'ed, NUL-terminated,
 * *len bytes) when out is not NULL.  Returns its exit status, or -1.
 */
static int run_git(char *const *argv, char **out, size_t *len)
{
	int p[2] = { -1, -1 };
	if (out && pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		if (out) {
			close(p[0]);
			close(p[1]);
		}
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(out ? p[1] : null, 1);
		dup2(null, 2);
		dup2(null, 0);
		if (chdir("/") != 0)
			_exit(127);
		setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
		setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
		unsetenv("GIT_DIR");
		unsetenv("GIT_CONFIG");
		execvp("git", argv);
		_exit(127);
	}
	char *buf = NULL;
	size_t n = 0, cap = 0;
	if (out) {
		close(p[1]);
		for (;;) {
			if (n + 4096 + 1 > cap) {
				char *nb = realloc(buf, cap = (n + 4096 + 1) * 2);
				if (!nb)
					break;
				buf = nb;
			}
			ssize_t k = read(p[0], buf + n, cap - n - 1);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			n += (size_t)k;
		}
		close(p[0]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (out) {
		if (!buf)
			buf = calloc(1, 1);
		else
			buf[n] = '\0';
		*out = buf;
		*len = n;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void kv_free(struct kv *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].val);
	}
	free(v);
}

/* The entries of a git config file in order (`git config --file F --list -z`); absent: none.  0 or -1. */
static int git_list(const char *file, struct kv **out, size_t *n)
{
	struct stat st;
	*out = NULL;
	*n = 0;
	if (lstat(file, &st) != 0)
		return 0;
	char *argv[] = { "git", "config", "--file", (char *)file, "--list", "-z", NULL };
	char *text;
	size_t len, cap = 0;
	if (run_git(argv, &text, &len) != 0) {
		free(text);
		return -1;
	}
	for (size_t i = 0; i < len;) {
		char *e = text + i;
		size_t l = strlen(e);
		char *nl = strchr(e, '\n');
		struct kv *nv = *n == cap ? grow_array(*out, &cap, *n + 1, sizeof *nv, 16) : *out;
		if (!nv)
			break;
		*out = nv;
		(*out)[*n].key = nl ? strndup(e, (size_t)(nl - e)) : strdup(e);
		(*out)[*n].val = nl ? strdup(nl + 1) : NULL;
		(*n)++;
		i += l + 1;
	}
	free(text);
	return 0;
}

/* The values of key, in order, joined by '\0'-free separators for comparison. */
static char *values_of(const struct kv *v, size_t n, const char *key)
{
	char *acc = strdup("");
	for (size_t i = 0; acc && i < n; i++) {
		if (strcmp(v[i].key, key))
			continue;
		char *next = joinf("%s%c%s\x1e", acc, v[i].val ? '=' : '!', v[i].val ? v[i].val : "");
		free(acc);
		acc = next;
	}
	return acc;
}

static bool git_key_safe(const char *key)
{
	const char *dot = strchr(key, '.');
	for (size_t i = 0; dot && i < NELEM(git_safe_keys); i++) {
		const char *k = git_safe_keys[i];
		size_t l = strlen(k);
		if (l > 2 && !strcmp(k + l - 2, ".*") ? !strncmp(key, k, l - 1) : !strcmp(key, k))
			return true;
	}
	return false;
}

/* True when key is branch.NAME.remote or branch.NAME.pushremote (git lists them lowercase). */
static bool branch_remote_key(const char *key)
{
	size_t l = strlen(key);
	if (strncmp(key, "branch.", 7) != 0)
		return false;
	return (l > 7 + 7 && !strcmp(key + l - 7, ".remote")) ||
	       (l > 7 + 11 && !strcmp(key + l - 11, ".pushremote"));
}

/* True when remotes (a config's entries) define the remote name: a remote.NAME.url or pushurl. */
static bool remote_defined(const struct kv *remotes, size_t nr, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < nr; i++) {
		const char *k = remotes[i].key;
		if (!strncmp(k, "remote.", 7) && !strncmp(k + 7, name, nl) &&
		    (!strcmp(k + 7 + nl, ".url") || !strcmp(k + 7 + nl, ".pushurl")))
			return true;
	}
	return false;
}

/*
 * A change that may be applied though its key is not in git_safe_keys, or
 * one of them that must not be.  core.hooksPath set to exactly /dev/null
 * (`git config core.hooksPath /dev/null`, which agents run to disable
 * hooks) runs nothing; any other value, or its removal, does not qualify.
 * branch.NAME.remote and branch.NAME.pushremote take a remote's name or a
 * URL, and a URL sends the user's next plain `git push` (or `git pull`)
 * there: safe only when every value is "." (this repository) or a remote
 * that remotes (the launch config; a config made in the session: itself)
 * defines.
 */
static bool git_change_safe(const char *key, const struct kv *w, size_t nw,
			    const struct kv *remotes, size_t nr)
{
	if (branch_remote_key(key)) {
		for (size_t i = 0; i < nw; i++)
			if (!strcmp(w[i].key, key) &&
			    (!w[i].val || (strcmp(w[i].val, ".") != 0 &&
					   !remote_defined(remotes, nr, w[i].val))))
				return false;
		return true;
	}
	if (git_key_safe(key))
		return true;
	if (strcmp(key, "core.hookspath") != 0)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < nw; i++) {
		if (strcmp(w[i].key, key))
			continue;
		if (!w[i].val || strcmp(w[i].val, "/dev/null") != 0)
			return false;
		n++;
	}
	return n > 0;
}

/* Sets key in file to the values work has for it (none: unset).  0 when git did it. */
static int git_set(const char *file, const char *key, const struct kv *w, size_t nw)
{
	char *unset[] = { "git", "config", "--file", (char *)file, "--unset-all", (char *)key, NULL };
	int st = run_git(unset, NULL, NULL);
	if (st != 0 && st != 5)
		return -1;
	for (size_t i = 0; i < nw; i++) {
		if (strcmp(w[i].key, key))
			continue;
		char *add[] = { "git", "config", "--file", (char *)file, "--add", (char *)key,
				w[i].val ? w[i].val : "true", NULL };
		if (run_git(add, NULL, NULL) != 0)
			return -1;
	}
	return 0;
}

/* Appends s to a ", "-separated list in *acc (malloc'ed). */
static void list_add(char **acc, const char *s)
{
	char *n = *acc ? joinf("%s, %s", *acc, s) : strdup(s);
	if (n) {
		free(*acc);
		*acc = n;
	}
}

/* A git config file: changed safe keys applied to the host's (unless it changed them too), the rest kept aside. */
static void git_config_finish(struct copies *c, const struct item *it, const char *rel,
			      const char *work, const char *snap, const char *host)
{
	struct kv *w = NULL, *s = NULL, *h = NULL;
	size_t nw = 0, ns = 0, nh = 0;
	char *applied = NULL, *kept = NULL;
	if (same(work, snap))
		return;
	if (git_list(work, &w, &nw) || git_list(snap, &s, &ns) || git_list(host, &h, &nh)) {
		keep_note(c, it, rel, work, host, "changed in the session and not readable as git config");
		goto out;
	}
	for (size_t pass = 0; pass < 2; pass++) {
		const struct kv *v = pass ? s : w;
		size_t nv = pass ? ns : nw;
		for (size_t i = 0; i < nv; i++) {
			const char *key = v[i].key;
			bool seen = false; /* once per key: its first entry in w, then in s */
			for (size_t j = 0; j < i && !seen; j++)
				seen = !strcmp(v[j].key, key);
			for (size_t j = 0; pass && j < nw && !seen; j++)
				seen = !strcmp(w[j].key, key);
			if (seen)
				continue;
			char *vw = values_of(w, nw, key), *vs = values_of(s, ns, key),
			     *vh = values_of(h, nh, key);
			if (vw && vs && vh && strcmp(vw, vs)) {
				if (!git_change_safe(key, w, nw, s, ns)) {
					list_add(&kept, key);
				} else if (strcmp(vh, vs)) {
					char *k = joinf("%s (changed on the host meanwhile)", key);
					list_add(&kept, k ? k : key);
					free(k);
				} else if ((host_touch(c, host), git_set(host, key, w, nw) == 0)) {
					list_add(&applied, key);
				} else {
					list_add(&kept, key);
				}
			}
			free(vw);
			free(vs);
			free(vh);
		}
	}
	if (applied)
		note(c, AUDIT_COPY_APPLIED, host, NULL, "git config keys applied: %s", applied);
	if (kept) {
		char what[900];
		snprintf(what, sizeof what, "git config keys not applied: %s (the session's whole file "
			 "kept; apply one by hand with git config --file %s KEY VALUE)", kept, host);
		keep_note(c, it, rel, work, host, what);
	}
out:
	kv_free(w, nw);
	kv_free(s, ns);
	kv_free(h, nh);
	free(applied);
	free(kept);
}

/* ---- JSON files --------------------------------------------------------------------- */

/*
 * Walks pattern segs[i..] in w and s together; each key that differs is
 * set back to s's value in w (removed when s has none) and added to *touched.
 */
static void json_reset(json_object *w, json_object *s, char **segs, size_t i, size_t nseg,
		       const char *path, char **touched)
{
	if (!json_object_is_type(w, json_type_object))
		return;
	bool star = !strcmp(segs[i], "*");
	json_object *keys = json_object_new_array();
	if (!keys)
		return;
	if (!star) {
		json_object_array_add(keys, json_object_new_string(segs[i]));
	} else {
		json_object_object_foreach(w, kw, vw0) {
			(void)vw0;
			json_object_array_add(keys, json_object_new_string(kw));
		}
		if (json_object_is_type(s, json_type_object)) {
			json_object_object_foreach(s, ks, vs0) {
				(void)vs0;
				if (!json_object_object_get_ex(w, ks, NULL))
					json_object_array_add(keys, json_object_new_string(ks));
			}
		}
	}
	for (size_t k = 0; k < json_object_array_length(keys); k++) {
		const char *key = json_object_get_string(json_object_array_get_idx(keys, k));
		json_object *vw = NULL, *vs = NULL;
		json_object_object_get_ex(w, key, &vw);
		if (json_object_is_type(s, json_type_object))
			json_object_object_get_ex(s, key, &vs);
		char *p = path[0] ? joinf("%s.%s", path, key) : strdup(key);
		if (!p)
			continue;
		if (i + 1 < nseg) {
			if (!vw && json_object_is_type(vs, json_type_object)) {
				vw = json_object_new_object();
				json_object_object_add(w, key, vw);
			}
			json_reset(vw, vs, segs, i + 1, nseg, p, touched);
		} else if (!json_object_equal(vw, vs)) {
			if (vs)
				json_object_object_add(w, key, json_object_get(vs));
			else
				json_object_object_del(w, key);
			list_add(touched, p);
		}
		free(p);
	}
	json_object_put(keys);
}

/* A JSON file: applied unless it touches one of the spec's keys; then those keep their launch value and the file is kept aside. */
static void json_finish(struct copies *c, const struct item *it)
{
	if (same(it->work, it->existed ? it->snap : it->init))
		return;
	if (!same(it->host, it->snap)) {
		keep_note(c, it, NULL, it->work, it->host, "changed in the session and on the host meanwhile");
		return;
	}
	json_object *w = json_object_from_file(it->work);
	json_object *s = it->existed ? json_object_from_file(it->snap) : NULL;
	if (!json_object_is_type(w, json_type_object)) {
		json_object_put(w);
		json_object_put(s);
		keep_note(c, it, NULL, it->work, it->host, "changed in the session; not a JSON object");
		return;
	}
	char *touched = NULL;
	for (const char *const *k = it->spec.keys; k && *k; k++) {
		char *copy = strdup(*k), *segs[32], *save = NULL;
		size_t nseg = 0;
		for (char *t = copy ? strtok_r(copy, ".", &save) : NULL; t && nseg < 32;
		     t = strtok_r(NULL, ".", &save))
			segs[nseg++] = t;
		if (nseg)
			json_reset(w, s, segs, 0, nseg, "", &touched);
		free(copy);
	}
	if (!touched) {
		apply_note(c, it, NULL, it->work, it->host, "changed in the session; applied");
	} else {
		char *tmp = joinf("%s/merged.json", c->dir);
		char what[900];
		snprintf(what, sizeof what, "changed in the session; keys kept at their launch value: %s "
			 "(the session's whole file kept)", touched);
		keep_note(c, it, NULL, it->work, it->host, what);
		if (tmp && json_object_to_file_ext(tmp, w, JSON_C_TO_STRING_PRETTY) == 0 &&
		    (host_touch(c, it->host), install(tmp, it->host) == 0))
			note(c, AUDIT_COPY_APPLIED, it->host, NULL, "the other changes applied");
		if (tmp)
			unlink(tmp);
		free(tmp);
	}
	free(touched);
	json_object_put(w);
	json_object_put(s);
}

/* ---- .git ------------------------------------------------------------------------- */

static bool git_file_safe(const char *name)
{
	if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(name))
		return true;
	for (size_t i = 0; i < NELEM(git_safe_files); i++)
		if (!strcmp(name, git_safe_files[i]))
			return true;
	return false;
}

/* HEAD and config: without either git says "not a git repository"; their deletion is never applied. */
static bool git_file_vital(const char *name)
{
	return !strcmp(name, "HEAD") || !strcmp(name, "config");
}

/*
 * True when the file w reads as a HEAD git can use: "ref: refs/..." or an
 * object id (40 or 64 hex digits), then a newline or nothing.
 */
static bool git_head_valid(const char *w)
{
	char buf[512];
	FILE *f = fopen(w, "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!strncmp(buf, "ref: refs/", 10))
		return n > 10 && !strchr(buf, '\n');
	return (n == 40 || n == 64) && strspn(buf, "0123456789abcdef") == n;
}

static int name_index(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return (int)i;
	return -1;
}

/* One top-level entry of a .git copy. */
static void git_entry(struct copies *c, const struct item *it, const char *n, unsigned *copied)
{
	struct stat st;
	char *w = joinf("%s/%s", it->work, n), *s = joinf("%s/%s", it->snap, n),
	     *h = joinf("%s/%s", it->host, n);
	int thr = name_index(n, git_through, NELEM(git_through));
	size_t l = strlen(n);
	if (!w || !s || !h)
		goto out;
	if ((thr >= 0 && it->through[thr]) ||
	    (it->existed && name_index(n, git_readonly, NELEM(git_readonly)) >= 0 &&
	     kind_of(s, &st) == 0 && kind_of(w, &st) == 3))
		goto out; /* bound: the real one was written */
	if (l > 5 && !strcmp(n + l - 5, ".lock"))
		goto out;
	int kw = kind_of(w, &st);
	if (kw == 3 && !strcmp(n, "hooks"))
		diff_tree(c, it, "hooks", w, s, h, DIFF_SAMPLES);
	else if (kw == 3 && name_index(n, git_applied, NELEM(git_applied)) >= 0)
		diff_tree(c, it, n, w, s, h, DIFF_APPLY);
	else if (kw == 3 && thr >= 0)
		merge_new(c, it, n, w, h, copied);
	else if (kw == 3)
		diff_tree(c, it, n, w, s, h, DIFF_KEEP);
	else if (kw == 1 && !strcmp(n, "config"))
		git_config_finish(c, it, n, w, s, h);
	else if (same(w, s))
		;
	else if (kw == 1 && !strcmp(n, "HEAD") && !git_head_valid(w))
		keep_note(c, it, n, w, h, "changed in the session to something git cannot read as HEAD");
	else if (kw == 1 && git_file_safe(n) && same(h, s))
		apply_note(c, it, n, w, h, "changed in the session; applied");
	else if (kw == 1 && git_file_safe(n))
		keep_note(c, it, n, w, h, "changed in the session and on the host meanwhile");
	else
		keep_note(c, it, n, w, h, "changed in the session");
out:
	free(w);
	free(s);
	free(h);
}

static void git_finish(struct copies *c, const struct item *it)
{
	struct dirent *de;
	unsigned copied = 0;
	DIR *d = opendir(it->work);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			git_entry(c, it, de->d_name, &copied);
	if (d)
		closedir(d);
	if (copied)
		note(c, AUDIT_COPY_APPLIED, it->host, NULL,
		     "%u file(s) of a repository made in the session (objects, refs, logs) applied",
		     copied);
	deletions(c, it->work, it->snap, it->host, true, git_file_safe, git_file_vital);
}

/* ---- directories written in place: their top-level scripts -------------------------- */

static bool name_in(const char *n, const char *const *list, size_t len);

/* Files of a COPY_TOP_SCRIPTS directory that are state its program writes, never run. */
static bool top_state_file(const char *n)
{
	size_t l = strlen(n);
	return !strcmp(n, "history.jsonl") || !strcmp(n, ".credentials.json") ||
	       (l > 5 && !strcmp(n + l - 5, ".lock")) || strstr(n, ".backup");
}

/* True when the file n (st: its lstat) in dfd looks like something a shell or interpreter runs. */
static bool top_script(int dfd, const char *n, const struct stat *st)
{
	static const char *const ext[] = { ".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs",
					   ".ts", ".rb", ".pl" };
	const char *dot = strrchr(n, '.');
	if (dot && dot != n && name_in(dot, ext, NELEM(ext)))
		return true;
	if (!S_ISREG(st->st_mode))
		return false;
	if (st->st_mode & 0111)
		return true;
	char head[2] = { 0, 0 };
	int fd = openat(dfd, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	bool shebang = fd >= 0 && read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
	if (fd >= 0)
		close(fd);
	return shebang;
}

/* COPY_TOP_SCRIPTS after the session: new or changed scripts directly in it->host moved aside. */
static void top_finish(struct copies *c, const struct item *it)
{
	DIR *d = opendir(it->host);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) || top_state_file(n))
			continue;
		const struct top_rec *t = NULL;
		for (size_t i = 0; i < it->ntops && !t; i++)
			if (!strcmp(it->tops[i].name, n))
				t = &it->tops[i];
		if (t && t->st.st_ino == st.st_ino && t->st.st_mode == st.st_mode &&
		    t->st.st_size == st.st_size && t->st.st_mtim.tv_sec == st.st_mtim.tv_sec &&
		    t->st.st_mtim.tv_nsec == st.st_mtim.tv_nsec &&
		    t->st.st_ctim.tv_sec == st.st_ctim.tv_sec && t->st.st_ctim.tv_nsec == st.st_ctim.tv_nsec)
			continue; /* untouched */
		if (!top_script(dirfd(d), n, &st))
			continue;
		char *host = joinf("%s/%s", it->host, n), *snap = joinf("%s/%s", it->snap, n);
		if (!host || !snap || (t && t->snap && same(host, snap))) {
			free(host);
			free(snap);
			continue;
		}
		char *k = keep(c, it, n, host);
		const char *what;
		host_touch(c, host);
		if (t && t->snap && install(snap, host) == 0)
			what = "a script changed in the session; its launch version put back";
		else if (unlink(host) == 0)
			what = t ? "a script changed in the session; removed (its launch version was too "
				   "big to copy)"
				 : "a script made in the session; removed";
		else
			what = "a script made or changed in the session; could not be removed";
		note(c, AUDIT_KEPT_ASIDE, host, k, "%s (settings may run it later)%s", what,
		     k ? "" : " (could not be kept: lost)");
		free(k);
		free(host);
		free(snap);
	}
	if (d)
		closedir(d);
}

/* ---- the end ---------------------------------------------------------------------- */

static void item_finish(struct copies *c, const struct item *it)
{
	if (it->ro_only)
		return;
	if (it->spec.apply == COPY_TOP_SCRIPTS) {
		top_finish(c, it);
	} else if (it->spec.apply == COPY_GIT_DIR) {
		git_finish(c, it);
	} else if (it->spec.dir) {
		diff_tree(c, it, "", it->work, it->snap, it->host, DIFF_KEEP);
	} else if (it->spec.apply == COPY_JSON_KEYS) {
		json_finish(c, it);
	} else if (it->spec.apply == COPY_GIT_CONFIG) {
		if (!same(it->work, it->snap) && !same(it->host, it->snap))
			keep_note(c, it, NULL, it->work, it->host,
				  "changed in the session and on the host meanwhile");
		else
			git_config_finish(c, it, NULL, it->work, it->snap, it->host);
	} else if (!same(it->work, it->existed ? it->snap : it->init)) {
		keep_note(c, it, NULL, it->work, it->host,
			  it->existed ? "changed in the session" : "made in the session");
	}
}

/* ---- runs-later files below the top level: checked after the session --------------- */

/*
 * Only the workspace's top-level runs-later paths are session copies.  A
 * nested repository's hooks and config (sub/.git/hooks/pre-commit, a
 * vendored repository's), sub/.claude/settings.json, sub/.mcp.json,
 * sub/.vscode/tasks.json, sub/.envrc... are ordinary workspace content
 * inside, yet a user running git or an agent in sub/ later obeys them.  So
 * a second layer, after the fact: at launch a bounded walk records those
 * that exist (path, size, mtime, ctime, inode, mode; a copy of each regular file
 * of at most NESTED_SNAP_MAX bytes), and after the session a second walk
 * finds new and changed ones.  A new or changed file is moved aside into
 * kept/ID/workspace/REL (its launch copy put back when there is one); a
 * nested git config is put back to its launch copy and its changed safe
 * keys applied (as the top-level .git/config), or, made in the session
 * (git init, git clone) or too big to have been copied, has its keys that
 * run programs removed (git config --unset-all).
 */
#define NESTED_MAX_ENTRIES 100000u /* directory entries looked at per walk */
#define NESTED_MAX_DEPTH 24u
#define NESTED_SNAP_MAX 65536

/* Directories the walk never enters: tools fill them by the thousand, and nobody runs git there. */
static const char *const nested_skip[] = { "node_modules", ".venv", "venv", "__pycache__", ".tox",
					   ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache",
					   ".npm", "site-packages", "dist-packages" };

/* Where the walk is: what a directory's entries may be. */
enum nested_where {
	NW_PLAIN,   /* workspace content: .mcp.json, .envrc; the directories below */
	NW_GITDIR,  /* a .git directory (or a submodule's under modules/): config, hooks/, modules/ */
	NW_MODULES, /* .git/modules: each directory a git dir */
	NW_HOOKS,   /* .git/hooks: every file but *.sample */
	NW_CODEX,   /* .codex: everything */
	NW_CLAUDE,  /* .claude: settings*.json */
	NW_VSCODE,  /* .vscode: tasks.json, settings.json, launch.json */
	NW_GEMINI,  /* .gemini: settings.json */
	NW_CURSOR,  /* .cursor: mcp.json */
};

struct nested_rec {
	char *rel;
	off_t size;
	struct timespec mtime;
	struct timespec ctime; /* a program can set mtime back, not ctime */
	ino_t ino;
	mode_t mode;
	bool snap; /* its content at launch is in STATE/sessions/ID/nested/REL */
};

struct nwalk {
	struct copies *c;
	const char *root;
	unsigned walked;
	bool capped;
	bool end; /* the walk after the session (else the one at launch) */
	FILE *list; /* at launch: the records, for the next launch if this one is killed */
};

static bool name_in(const char *n, const char *const *list, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strcmp(n, list[i]))
			return true;
	return false;
}

/* The directory n's place, seen from a directory at where; false: not entered. */
static bool nested_enter(enum nested_where where, const char *n, enum nested_where *sub)
{
	static const struct { const char *name; enum nested_where w; } plain[] = {
		{ ".git", NW_GITDIR }, { ".codex", NW_CODEX }, { ".claude", NW_CLAUDE },
		{ ".vscode", NW_VSCODE }, { ".gemini", NW_GEMINI }, { ".cursor", NW_CURSOR },
	};
	switch (where) {
	case NW_PLAIN:
		for (size_t i = 0; i < NELEM(plain); i++)
			if (!strcmp(n, plain[i].name)) {
				*sub = plain[i].w;
				return true;
			}
		*sub = NW_PLAIN;
		return !name_in(n, nested_skip, NELEM(nested_skip));
	case NW_GITDIR:
		*sub = !strcmp(n, "hooks") ? NW_HOOKS : NW_MODULES;
		return !strcmp(n, "hooks") || !strcmp(n, "modules");
	case NW_MODULES:
		*sub = NW_GITDIR;
		return true;
	case NW_CODEX:
		*sub = NW_CODEX;
		return true;
	default:
		return false;
	}
}

/*
 * True when the file (not directory) n, in a directory at where, is run or
 * obeyed later.  A symlink or a file where a .git, .claude, hooks...
 * directory goes counts too (sub/.git -> a directory of hooks elsewhere, a
 * `gitdir:` file).
 */
static bool nested_runs_later(enum nested_where where, const char *n)
{
	size_t l = strlen(n);
	enum nested_where sub;
	switch (where) {
	case NW_PLAIN:
		/* NAME.code-workspace: VS Code's multi-root workspace file, whose "tasks" may
		   run on folderOpen (also at the top level: no fixed name to copy) */
		return !strcmp(n, ".mcp.json") || !strcmp(n, ".envrc") ||
		       (l > 15 && !strcmp(n + l - 15, ".code-workspace")) ||
		       (nested_enter(where, n, &sub) && sub != NW_PLAIN);
	case NW_GITDIR:
		return !strcmp(n, "config") || !strcmp(n, "hooks") || !strcmp(n, "modules");
	case NW_HOOKS:
		return !is_sample(n);
	case NW_CODEX:
		return true;
	case NW_CLAUDE:
		return !strncmp(n, "settings", 8) && l > 5 && !strcmp(n + l - 5, ".json");
	case NW_VSCODE:
		return !strcmp(n, "tasks.json") || !strcmp(n, "settings.json") || !strcmp(n, "launch.json");
	case NW_GEMINI:
		return !strcmp(n, "settings.json");
	case NW_CURSOR:
		return !strcmp(n, "mcp.json");
	default:
		return false;
	}
}

/* True when n, in the workspace's top level, is one of the session copies (handled by them). */
static bool nested_top_copy(const struct copies *c, const char *root, const char *n)
{
	size_t rl = strlen(root);
	for (size_t i = 0; i < c->nitems; i++) {
		const char *h = c->items[i].host;
		if (h && !strncmp(h, root, rl) && h[rl] == '/' && !strcmp(h + rl + 1, n))
			return true;
	}
	return false;
}

static void nested_found(struct nwalk *w, const char *rel, bool config);

/* Walks the directory dfd (rel, relative to the root; closes dfd). */
static void nested_dir(struct nwalk *w, int dfd, char *rel, size_t rlen, unsigned depth,
		       enum nested_where where)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (w->walked >= NESTED_MAX_ENTRIES) {
			w->capped = true;
			break;
		}
		w->walked++;
		if (depth == 0 && nested_top_copy(w->c, w->root, n))
			continue;
		size_t nl = strlen(n);
		if (rlen + nl + 2 > PATH_MAX)
			continue;
		size_t at = rlen ? rlen + 1 : 0;
		if (rlen)
			rel[rlen] = '/';
		memcpy(rel + at, n, nl + 1);
		unsigned char t = de->d_type;
		struct stat st;
		if (t == DT_UNKNOWN && fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0)
			t = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		enum nested_where sub;
		if (t == DT_DIR) {
			if (nested_enter(where, n, &sub)) {
				if (depth + 1 >= NESTED_MAX_DEPTH) {
					w->capped = true;
				} else {
					int fd = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
					if (fd >= 0)
						nested_dir(w, fd, rel, at + nl, depth + 1, sub);
				}
			}
		} else if (nested_runs_later(where, n)) {
			nested_found(w, rel, where == NW_GITDIR && !strcmp(n, "config"));
		}
		rel[rlen] = '\0';
	}
	closedir(d);
}

/* Walks the workspace root, calling nested_found() for each runs-later file below its top level. */
static void nested_walk(struct nwalk *w)
{
	char rel[PATH_MAX] = "";
	int fd = open(w->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		nested_dir(w, fd, rel, 0, 0, NW_PLAIN);
}

static int nested_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nested_rec *)a)->rel, ((const struct nested_rec *)b)->rel);
}

/* The kept/ID/workspace/REL of a nested file. */
static const struct item nested_item = { .label = (char *)"workspace" };

/* A new or changed runs-later file: moved aside (kept), its launch copy put back when there is one. */
static void nested_aside(struct copies *c, const char *rel, const char *host, const char *snap,
			 bool existed)
{
	char *k = keep(c, &nested_item, rel, host);
	const char *what;
	host_touch(c, host);
	if (snap && install(snap, host) == 0)
		what = "changed in the session; its launch version put back";
	else if (unlink(host) == 0)
		what = existed ? "changed in the session; removed (its launch version was too big to copy)"
			       : "made in the session; removed";
	else
		what = "changed in the session; could not be removed";
	note(c, AUDIT_KEPT_ASIDE, host, k, "a runs-later file below the workspace's top level, %s%s",
	     what, k ? "" : " (could not be kept: lost)");
	free(k);
}

/* Keys a git config made in the session may keep: where its remote and submodules are. */
static bool nested_key_kept(const char *key)
{
	static const char *const sections[] = { "remote.", "submodule." };
	static const char *const names[] = { ".url", ".pushurl", ".fetch", ".path", ".active" };
	const char *dot = strrchr(key, '.');
	if (!dot)
		return false;
	bool sec = false;
	for (size_t i = 0; i < NELEM(sections); i++)
		sec = sec || !strncmp(key, sections[i], strlen(sections[i]));
	return sec && name_in(dot, names, NELEM(names));
}

/*
 * A nested git config made or changed in the session.  Copied at launch:
 * that copy is put back and the changed safe keys applied (the rest kept
 * aside), as for the top-level .git/config.  Made in the session (git init,
 * git clone in sub/) or too big to copy: its keys that may run a program
 * (all but the safe ones, a remote's or a submodule's url, pushurl, fetch,
 * path, active) are removed, and the session's whole file kept aside.
 */
static void nested_config(struct copies *c, const char *rel, const char *host, const char *snap)
{
	char *work = joinf("%s/nested-config.work", c->dir);
	if (!work || (unlink(work), copy_file(host, work)) != 0) {
		nested_aside(c, rel, host, snap, snap != NULL);
		free(work);
		return;
	}
	if (snap) {
		if (install(snap, host) == 0)
			git_config_finish(c, &nested_item, rel, work, snap, host);
		else
			nested_aside(c, rel, host, NULL, true);
		unlink(work);
		free(work);
		return;
	}
	struct kv *v = NULL;
	size_t nv = 0;
	char *removed = NULL;
	if (git_list(work, &v, &nv) != 0) {
		nested_aside(c, rel, host, NULL, false);
	} else {
		for (size_t i = 0; i < nv; i++) {
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = !strcmp(v[j].key, v[i].key);
			if (seen || git_change_safe(v[i].key, v, nv, v, nv) || nested_key_kept(v[i].key))
				continue;
			char *unset[] = { "git", "config", "--file", (char *)host, "--unset-all",
					  v[i].key, NULL };
			int st = run_git(unset, NULL, NULL);
			list_add(&removed, v[i].key);
			if (st != 0 && st != 5)
				list_add(&removed, "(could not be removed)");
		}
		if (removed) {
			char what[900];
			snprintf(what, sizeof what, "a git config below the workspace's top level, made in "
				 "the session: keys removed: %s (the session's whole file kept)", removed);
			keep_note(c, &nested_item, rel, work, host, what);
		}
	}
	kv_free(v, nv);
	free(removed);
	unlink(work);
	free(work);
}

/* At launch: records rel (its launch copy when small); after: compares it with the record. */
static void nested_found(struct nwalk *w, const char *rel, bool config)
{
	struct copies *c = w->c;
	struct stat st;
	char *host = joinf("%s/%s", w->root, rel);
	if (!host || lstat(host, &st) != 0) {
		free(host);
		return;
	}
	if (!w->end) {
		struct nested_rec *n = c->nnr == c->capnr
					       ? grow_array(c->nr, &c->capnr, c->nnr + 1, sizeof *n, 16)
					       : c->nr;
		if (n) {
			c->nr = n;
			struct nested_rec *r = &c->nr[c->nnr];
			*r = (struct nested_rec){ .rel = strdup(rel), .size = st.st_size,
						  .mtime = st.st_mtim, .ctime = st.st_ctim,
						  .ino = st.st_ino,
						  .mode = st.st_mode };
			char *snap = joinf("%s/nested/%s", c->dir, rel);
			if (r->rel && snap && S_ISREG(st.st_mode) && st.st_size <= NESTED_SNAP_MAX) {
				char *slash = strrchr(snap, '/');
				*slash = '\0';
				int e = mkdir_p(snap);
				*slash = '/';
				r->snap = !e && copy_file(host, snap) == 0;
			}
			free(snap);
			if (r->rel) {
				c->nnr++;
				if (w->list)
					fprintf(w->list, "%d %lld %lld %ld %lld %ld %llu %o %s\n",
						r->snap, (long long)st.st_size,
						(long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
						(long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec,
						(unsigned long long)st.st_ino, (unsigned)st.st_mode, rel);
			}
		}
		free(host);
		return;
	}
	struct nested_rec key = { .rel = (char *)rel };
	struct nested_rec *r = c->nnr ? bsearch(&key, c->nr, c->nnr, sizeof *c->nr, nested_cmp) : NULL;
	char *snap = r && r->snap ? joinf("%s/nested/%s", c->dir, rel) : NULL;
	if (r && r->size == st.st_size && r->ino == st.st_ino && r->mode == st.st_mode &&
	    r->mtime.tv_sec == st.st_mtim.tv_sec && r->mtime.tv_nsec == st.st_mtim.tv_nsec &&
	    r->ctime.tv_sec == st.st_ctim.tv_sec && r->ctime.tv_nsec == st.st_ctim.tv_nsec)
		goto out; /* untouched */
	if (snap && same(host, snap))
		goto out; /* touched, the same */
	if (config && S_ISREG(st.st_mode))
		nested_config(c, rel, host, snap);
	else
		nested_aside(c, rel, host, snap, r != NULL);
out:
	free(snap);
	free(host);
}

/* The walk stopped at its bounds: said in the log and to the user. */
static void nested_capped_note(struct copies *c, unsigned walked)
{
	char what[512];
	snprintf(what, sizeof what, "stopped looking for runs-later files below the workspace's top "
		 "level after %u entries (or %u levels): deeper ones were not checked", walked,
		 NESTED_MAX_DEPTH);
	struct audit_event ev = { .source = AUDIT_SOURCE_LAUNCHER, .pid = getpid(),
				  .event = "nested_walk_capped", .file = c->nested_root,
				  .response_time_ms = -1, .message = what };
	if (c->log)
		(void)audit_write(c->log, &ev);
	if (c->msgf)
		fprintf(c->msgf, "airlock: warning: %s\n", what);
}

/* After the session: the second walk (copies_finish()). */
static void nested_finish(struct copies *c)
{
	if (!c->nested_root)
		return;
	struct nwalk w = { .c = c, .root = c->nested_root, .end = true };
	nested_walk(&w);
	if (w.capped || c->nested_capped)
		nested_capped_note(c, w.walked > c->nested_walked ? w.walked : c->nested_walked);
}

/* At launch: the first walk (copies_prepare()); its records also in STATE/sessions/ID/nested.list. */
static void nested_launch(struct copies *c, const char *root)
{
	char *lp = joinf("%s/nested.list", c->dir);
	struct nwalk w = { .c = c, .root = root };
	size_t rl = strlen(root);
	if (!(c->nested_root = strdup(root)))
		return;
	w.list = lp ? fopen(lp, "we") : NULL;
	if (w.list) {
		fprintf(w.list, "W %s\n", root);
		for (size_t i = 0; i < c->nitems; i++) {
			const char *h = c->items[i].host;
			if (h && !strncmp(h, root, rl) && h[rl] == '/' && !strchr(h + rl + 1, '/'))
				fprintf(w.list, "T %s\n", h + rl + 1);
		}
	}
	nested_walk(&w);
	if (w.list)
		fclose(w.list);
	free(lp);
	if (c->nnr)
		qsort(c->nr, c->nnr, sizeof *c->nr, nested_cmp);
	c->nested_capped = w.capped;
	c->nested_walked = w.walked;
}

/*
 * A store whose launcher was killed (stale_sweep()): its records read back
 * and the second walk made now, before this session's first, for the
 * killed session's kept/ID; the events wait in nc for its log
 * (copies_finish()).
 */
static void nested_sweep(struct copies *nc, const char *store, const char *id)
{
	char *lp = joinf("%s/nested.list", store);
	FILE *f = lp ? fopen(lp, "re") : NULL;
	free(lp);
	if (!f)
		return;
	struct copies s = { .dir = (char *)store, .defer_to = nc };
	struct copies_result res;
	s.res = &res;
	s.kept = joinf("%s/kept/%s", nc->state, id);
	char line[PATH_MAX + 128];
	while (s.kept && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'W' && line[1] == ' ' && !s.nested_root) {
			s.nested_root = strdup(line + 2);
		} else if (line[0] == 'T' && line[1] == ' ' && s.nested_root) {
			struct item *ni = s.nitems == s.capitems
						  ? grow_array(s.items, &s.capitems, s.nitems + 1, sizeof *ni, 16)
						  : s.items;
			if (!ni)
				break;
			s.items = ni;
			memset(&s.items[s.nitems], 0, sizeof *s.items);
			if ((s.items[s.nitems].host = joinf("%s/%s", s.nested_root, line + 2)))
				s.nitems++;
		} else {
			int snap, off = 0;
			long long size, sec, nsec, csec, cnsec;
			unsigned long long ino;
			unsigned mode;
			struct nested_rec *n = s.nnr == s.capnr
						       ? grow_array(s.nr, &s.capnr, s.nnr + 1, sizeof *n, 16)
						       : s.nr;
			if (!n)
				break;
			s.nr = n;
			if (sscanf(line, "%d %lld %lld %lld %lld %lld %llu %o %n", &snap, &size, &sec,
				   &nsec, &csec, &cnsec, &ino, &mode, &off) != 8 || off <= 0 || !line[off])
				continue;
			s.nr[s.nnr] = (struct nested_rec){ .rel = strdup(line + off), .size = (off_t)size,
							  .mtime = { .tv_sec = sec, .tv_nsec = nsec },
							  .ctime = { .tv_sec = csec, .tv_nsec = cnsec },
							  .ino = (ino_t)ino, .mode = (mode_t)mode,
							  .snap = snap != 0 };
			if (s.nr[s.nnr].rel)
				s.nnr++;
		}
	}
	fclose(f);
	if (s.nested_root) {
		if (s.nnr)
			qsort(s.nr, s.nnr, sizeof *s.nr, nested_cmp);
		struct nwalk w = { .c = &s, .root = s.nested_root, .end = true };
		nested_walk(&w);
	}
	for (size_t i = 0; i < s.nitems; i++)
		free(s.items[i].host);
	free(s.items);
	for (size_t i = 0; i < s.nnr; i++)
		free(s.nr[i].rel);
	free(s.nr);
	free(s.nested_root);
	free(s.kept);
}

void copies_finish(struct copies *c, struct audit_log *log, struct copies_result *res)
{
	struct copies_result scratch;
	res = res ? res : &scratch;
	memset(res, 0, sizeof *res);
	if (!c)
		return;
	c->log = log;
	c->res = res;
	free(c->msg);
	c->msg = NULL;
	c->msgf = open_memstream(&c->msg, &c->msglen);
	for (size_t i = 0; i < c->ndeferred; i++) {
		struct deferred *d = &c->deferred[i];
		if (d->event && d->file && d->what)
			note(c, d->event, d->file, d->kept, "%s (left by a session whose launcher was "
			     "killed; found at this launch)", d->what);
	}
	for (size_t i = 0; i < c->nitems; i++)
		item_finish(c, &c->items[i]);
	nested_finish(c);
	if (c->msgf && c->said_header) {
		fputs("  Review each before using it: `diff -r KEPT PATH`; to apply one by hand, copy "
		      "it over PATH (all of them: ", c->msgf);
		termtext_put_text(c->msgf, c->kept);
		fputs(").\n", c->msgf);
	}
	if (c->msgf)
		fclose(c->msgf);
	c->msgf = NULL;
	c->log = NULL;
}

const char *copies_message(const struct copies *c)
{
	return c && c->msg ? c->msg : "";
}

/*
 * Removes the session's store in the background (rm -rf, not waited for:
 * dozens of rmdir(2) cost tens of ms on a disk mounted with discard), or
 * here when rm cannot be started.
 */
static void store_remove(const char *dir)
{
	static char *const env[] = { NULL };
	char *const argv[] = { "rm", "-rf", "--", (char *)dir, NULL };
	pid_t pid;
	if (access("/bin/rm", X_OK) != 0 || posix_spawn(&pid, "/bin/rm", NULL, NULL, argv, env) != 0)
		remove_tree(dir);
}

void copies_free(struct copies *c)
{
	if (!c)
		return;
	if (c->dir)
		store_remove(c->dir);
	placeholders_remove(c);
	for (size_t i = 0; i < c->nitems; i++) {
		free(c->items[i].host);
		free(c->items[i].label);
		free(c->items[i].work);
		free(c->items[i].snap);
		free(c->items[i].init);
		for (size_t j = 0; j < c->items[i].ntops; j++)
			free(c->items[i].tops[j].name);
		free(c->items[i].tops);
	}
	free(c->items);
	for (size_t i = 0; i < c->nstrings; i++)
		free(c->bind_strings[i]);
	free(c->bind_strings);
	free(c->binds);
	for (size_t i = 0; i < NELEM(c->hidden_store); i++)
		free(c->hidden_store[i]);
	free(c->state);
	free(c->dir);
	free(c->kept);
	free(c->id);
	free(c->exclude_block);
	free(c->ph_env);
	free(c->hooks_path);
	for (size_t i = 0; i < c->nnr; i++)
		free(c->nr[i].rel);
	free(c->nr);
	free(c->nested_root);
	for (size_t i = 0; i < c->ndeferred; i++) {
		free(c->deferred[i].event);
		free(c->deferred[i].file);
		free(c->deferred[i].kept);
		free(c->deferred[i].what);
	}
	free(c->deferred);
	free(c->msg);
	free(c);
}

/* ---- --no-sandbox ------------------------------------------------------------------ */

/* Appends a deny rule for writes to pattern. */
static int deny_write(struct policy *p, const char *pattern)
{
	return policy_rule_add(p, POLICY_LIST_DENY, POLICY_RULE_FILE, POLICY_MATCH_GLOB, pattern,
			       POLICY_FILE_WRITE,
			       "runs later, outside the sandbox; --no-sandbox has no session copies, "
			       "so writing it is refused (by the shim only)");
}

static int spec_rules(struct policy *p, const struct copy_spec *s)
{
	static const char *const git[] = { "hooks", "hooks/**", "config", "config.worktree" };
	static const char *const scripts[] = { "*.sh", "*.py", "*.js", "*.ts" };
	char pat[PATH_MAX];
	int r = 0;
	if (s->apply == COPY_TOP_SCRIPTS) {
		/* the directory itself stays writable: only the usual script names at its top */
		for (size_t i = 0; i < NELEM(scripts) && !r; i++) {
			snprintf(pat, sizeof pat, "%s/%s", s->path, scripts[i]);
			r = deny_write(p, pat);
		}
		return r;
	}
	if (s->apply == COPY_GIT_DIR) {
		for (size_t i = 0; i < NELEM(git) && !r; i++) {
			snprintf(pat, sizeof pat, "%s/%s", s->path, git[i]);
			r = deny_write(p, pat);
		}
		return r;
	}
	r = deny_write(p, s->path);
	if (!r && s->dir) {
		snprintf(pat, sizeof pat, "%s/**", s->path);
		r = deny_write(p, pat);
	}
	return r;
}

int copies_no_sandbox_rules(struct policy *p, const struct copy_spec *extra, size_t nextra)
{
	int r = 0;
	for (size_t i = 0; i < NELEM(builtin) && !r; i++)
		r = spec_rules(p, &builtin[i]);
	for (size_t i = 0; i < nextra && !r; i++)
		r = spec_rules(p, &extra[i]);
	return r;
}
