/* masks.c — the mask walks: what deny-read rules and the mandatory list name under the workspace and home, and the host's unix sockets, hidden through the sandbox's builder (see masks.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/grow.h"
#include "launcher/sandbox/masks.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The mandatory mask list, relative to home: credential stores, whatever the policy says. */
static const char *const mandatory_masks[] = {
	".ssh",		  ".aws",	      ".gnupg",		".config/gh",
	".netrc",	  ".docker/config.json", ".kube",	".git-credentials",
	".config/gcloud", ".azure",	      ".npmrc",		".pypirc",
};

/*
 * Trees the walk does not descend: git's object store and the dependency,
 * toolchain and cache trees tools fill by the ten thousand (content-addressed
 * or downloaded names no deny rule is written for, and most of a big home's
 * entries).  Secrets in them are still refused by the shim's rules; only the
 * kernel-layer mask is not added.  Each entry is a path suffix.
 */
static const char *const walk_skip_suffixes[] = {
	"/.git/objects", "/node_modules", "/.cache", "/.npm", "/.rustup", "/.pyenv",
	"/.cargo/registry", "/.cargo/git", "/.m2/repository", "/.gradle/caches", "/go/pkg/mod",
	"/__pycache__", "/.local/share/Trash", "/.tox", "/site-packages", "/dist-packages",
};

/*
 * Trees the socket walk does not descend besides those: what the sandbox
 * replaces with its own (/proc, /sys, /dev, /run, /tmp: not visible anyway
 * under the default read tree, listed for a sandbox.read that names them),
 * the distribution's files (installed by the package manager, no service's
 * socket is put there) and the stores of images, packages and logs that
 * hold entries by the hundred thousand.  Exact canonical paths.
 */
static const char *const socket_walk_skips[] = {
	"/proc", "/sys", "/dev", "/run", "/tmp", "/boot", "/lost+found",
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
	"/usr/libexec", "/usr/share", "/usr/include", "/usr/src",
	"/var/cache", "/var/log", "/var/lib/apt", "/var/lib/dpkg", "/var/lib/rpm",
	"/var/lib/docker/overlay2", "/var/lib/docker/image", "/var/lib/containerd",
	"/var/lib/containers/storage", "/var/lib/snapd", "/var/lib/flatpak",
	"/nix/store", "/gnu/store", "/snap",
};

/* A directory waiting in the breadth-first walk. */
struct walk_dir {
	char *path; /* owned */
	unsigned depth;
};

/* The walk's state: a FIFO of directories, the roots it covers, where results go. */
struct walk {
	const struct policy_image *img; /* NULL: the socket walk (no deny-read rules to apply) */
	const struct masks_target *t;
	struct masks_report *rep;
	struct walk_dir *queue; /* owned */
	size_t head, tail, cap;
	const char *roots[2];   /* canonical workspace and home; NULL when absent */
	const char *const *done; /* the socket walk: trees not descended (walked already, the
				    sandbox's own); NULL-terminated, or NULL */
	unsigned max_entries;   /* the bounds: MASKS_WALK_MAX_ENTRIES or MASKS_SOCKETS_MAX_ENTRIES */
	bool full;              /* max_entries reached: stop everything */
	char *failing;          /* the caller's PATH_MAX bytes, or NULL */
	int err;                /* what the failed mask() returned */
};

/* Stops the walk with r, saying where. */
static enum masks_result failed(struct walk *w, enum masks_result r, const char *path)
{
	if (w->failing)
		snprintf(w->failing, PATH_MAX, "%s", path);
	return r;
}

/*
 * Hides a canonical path through the target.  Nothing is done when the path
 * does not show inside anyway (not in the readable tree, or already under a
 * mask), so each path is hidden once.
 */
static enum masks_result hide(struct walk *w, const char *canon, bool is_dir)
{
	if (!w->t->visible(w->t->ctx, canon))
		return MASKS_OK;
	int r = w->t->mask(w->t->ctx, canon, is_dir);
	if (r < 0) {
		w->err = r;
		return failed(w, MASKS_MASK_FAILED, canon);
	}
	w->rep->masks++;
	return MASKS_OK;
}

/*
 * A unix socket (S_ISSOCK) at its canonical place: hidden unless the policy
 * names it (target->named).  connect(2) needs only write permission on the
 * socket's inode, which a read-only mount does not check; /dev/null bound
 * over it leaves a character device there, and connect() to it fails with
 * ECONNREFUSED (unix(7)).
 */
static enum masks_result hide_socket(struct walk *w, const char *canon)
{
	if (w->t->named && w->t->named(w->t->ctx, canon))
		return MASKS_OK;
	unsigned before = w->rep->masks;
	enum masks_result r = hide(w, canon, false);
	w->rep->sockets += w->rep->masks - before;
	return r;
}

/* The mandatory list: each entry under home that exists, at its canonical place. */
static enum masks_result mandatory_add(struct walk *w, const char *home)
{
	char path[PATH_MAX], canon[PATH_MAX];
	struct stat st;
	for (size_t i = 0; i < NELEM(mandatory_masks); i++) {
		int n = snprintf(path, sizeof path, "%s/%s", home, mandatory_masks[i]);
		if (n < 0 || (size_t)n >= sizeof path || !realpath(path, canon) || stat(canon, &st) != 0)
			continue;
		enum masks_result r;
		/*
		 * Not shown (home as an allowlist): an empty mask there all the same, where the
		 * target wants one, so that an attempt on it meets a rule and is logged
		 */
		if (!w->t->visible(w->t->ctx, canon) && strcmp(canon, path) == 0 && w->t->placeholder &&
		    w->t->placeholder(w->t->ctx, canon)) {
			int e = w->t->mask(w->t->ctx, canon, S_ISDIR(st.st_mode));
			if (e < 0) {
				w->err = e;
				return failed(w, MASKS_MASK_FAILED, canon);
			}
			w->rep->masks++;
			continue;
		}
		r = hide(w, canon, S_ISDIR(st.st_mode));
		if (r != MASKS_OK)
			return r;
	}
	return MASKS_OK;
}

/* True when a deny rule (not the default) refuses reading path. */
static bool deny_read(const struct walk *w, const char *path)
{
	struct policy_verdict v = policy_decide_open(w->img, path, POLICY_FILE_READ);
	return v.decision == POLICY_DENY && v.rule >= 0;
}

static enum masks_result walk_push(struct walk *w, const char *path, unsigned depth)
{
	if (w->tail == w->cap) {
		struct walk_dir *n = grow_array(w->queue, &w->cap, w->tail + 1, sizeof *n, 256);
		if (!n)
			return failed(w, MASKS_NO_MEMORY, path);
		w->queue = n;
	}
	if (!(w->queue[w->tail].path = strdup(path)))
		return failed(w, MASKS_NO_MEMORY, path);
	w->queue[w->tail++].depth = depth;
	return MASKS_OK;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/*
 * Not descended: the trees above, the other walk root (home holding the
 * workspace is walked once); in the socket walk also the system trees above
 * and the trees walked already.
 */
static bool walk_skips(const struct walk *w, const char *path, const char *root)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < NELEM(walk_skip_suffixes); i++)
		if (ends_with(path, n, walk_skip_suffixes[i]))
			return true;
	for (size_t i = 0; i < NELEM(w->roots); i++)
		if (w->roots[i] && w->roots[i] != root && strcmp(path, w->roots[i]) == 0)
			return true;
	if (w->img)
		return false;
	for (size_t i = 0; i < NELEM(socket_walk_skips); i++)
		if (strcmp(path, socket_walk_skips[i]) == 0)
			return true;
	for (const char *const *d = w->done; d && *d; d++)
		if (strcmp(path, *d) == 0)
			return true;
	return false;
}

/*
 * A symlink is never followed by the walk.  Its content is its target's, so
 * when a deny rule names the link or its canonical target, the target is
 * hidden at its canonical place (a bwrap mount on the link would land on
 * the target anyway); so is a socket it leads to, wherever that is (when
 * it shows).  Dangling links hide nothing.
 */
static enum masks_result walk_link(struct walk *w, const char *path)
{
	char canon[PATH_MAX];
	struct stat st;
	if (!realpath(path, canon) || stat(canon, &st) != 0)
		return MASKS_OK;
	if (w->img && (deny_read(w, path) || deny_read(w, canon)))
		return hide(w, canon, S_ISDIR(st.st_mode));
	if (S_ISSOCK(st.st_mode))
		return hide_socket(w, canon);
	return MASKS_OK;
}

/*
 * One entry: hide it when denied, else queue it when it is a directory worth
 * descending.  type: its readdir(3) d_type, DT_UNKNOWN when not known.  The
 * socket walk (no image) needs no lstat(2) for what d_type says is not a
 * directory or a socket, and follows no symlink: a socket a link leads to
 * is found where it is, if that is shown (a host of trees holds thousands of
 * links, /etc/alternatives, certificates: resolving each was most of the
 * walk's time).
 */
static enum masks_result walk_entry(struct walk *w, const char *path, unsigned depth,
				    const char *root, unsigned char type)
{
	struct stat st;
	w->rep->walked++;
	if (!w->img && type != DT_UNKNOWN && type != DT_DIR && type != DT_SOCK)
		return MASKS_OK;
	if (lstat(path, &st) != 0)
		return MASKS_OK;
	if (!w->img && S_ISLNK(st.st_mode))
		return MASKS_OK;
	if (S_ISLNK(st.st_mode))
		return walk_link(w, path);
	if (w->img && deny_read(w, path))
		return hide(w, path, S_ISDIR(st.st_mode));
	if (S_ISSOCK(st.st_mode))
		return hide_socket(w, path);
	if (!S_ISDIR(st.st_mode) || walk_skips(w, path, root))
		return MASKS_OK;
	if (!w->t->visible(w->t->ctx, path) && !(w->t->below && w->t->below(w->t->ctx, path)))
		return MASKS_OK;
	if (depth >= MASKS_WALK_MAX_DEPTH) {
		w->rep->capped = true;
		return MASKS_OK;
	}
	return walk_push(w, path, depth);
}

/* Examines the entries of one directory; stops at the entry cap. */
static enum masks_result walk_dir(struct walk *w, const struct walk_dir *d, const char *root)
{
	char path[PATH_MAX];
	DIR *dir = opendir(d->path);
	struct dirent *de;
	enum masks_result r = MASKS_OK;
	if (!dir)
		return MASKS_OK; /* unreadable here: the agent, with the same credentials, cannot list it either */
	while (r == MASKS_OK && (de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (w->rep->walked >= w->max_entries) {
			w->rep->capped = w->full = true;
			break;
		}
		int n = snprintf(path, sizeof path, "%s%s%s", d->path,
				 strcmp(d->path, "/") ? "/" : "", de->d_name);
		if (n > 0 && (size_t)n < sizeof path)
			r = walk_entry(w, path, d->depth + 1, root, de->d_type);
	}
	closedir(dir);
	return r;
}

/* Breadth-first from root, so shallow secrets (.env, ~/.ssh) are found before a cap hits. */
static enum masks_result walk_root(struct walk *w, const char *root)
{
	if (w->full)
		return MASKS_OK;
	enum masks_result r = walk_entry(w, root, 0, root, DT_UNKNOWN);
	while (r == MASKS_OK && w->head < w->tail && !w->full) {
		struct walk_dir d = w->queue[w->head++];
		r = walk_dir(w, &d, root);
		free(d.path);
	}
	while (w->head < w->tail)
		free(w->queue[w->head++].path);
	w->head = w->tail = 0;
	return r;
}

enum masks_result masks_apply(const struct policy_image *img, const char *workspace,
			      const char *home, const struct masks_target *target,
			      struct masks_report *rep, char *failing, int *err)
{
	char canon_home[PATH_MAX];
	struct walk w = { .img = img, .t = target, .rep = rep, .roots = { workspace, NULL },
			  .max_entries = MASKS_WALK_MAX_ENTRIES, .failing = failing };
	memset(rep, 0, sizeof *rep);
	bool have_home = home && realpath(home, canon_home) != NULL;
	if (have_home && strcmp(canon_home, workspace) != 0)
		w.roots[1] = canon_home;
	enum masks_result r = have_home ? mandatory_add(&w, canon_home) : MASKS_OK;
	for (size_t i = 0; i < NELEM(w.roots) && r == MASKS_OK; i++)
		if (w.roots[i])
			r = walk_root(&w, w.roots[i]);
	free(w.queue);
	if (err)
		*err = w.err;
	return r;
}

/* True when path is one of roots[0..n) or below one other than roots[self]. */
static bool under_other_root(const char *const *roots, size_t n, size_t self)
{
	const char *p = roots[self];
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(roots[i]);
		bool inside = strcmp(roots[i], "/") == 0 ||
			      (strncmp(p, roots[i], k) == 0 && (p[k] == '/' || p[k] == '\0'));
		/* the same root twice: the first one stands */
		if (i != self && inside && (strcmp(p, roots[i]) != 0 || i < self))
			return true;
	}
	return false;
}

enum masks_result masks_sockets(const char *const *roots, size_t nroots, const char *const *done,
				const struct masks_target *target, struct masks_report *rep,
				char *failing, int *err)
{
	struct walk w = { .t = target, .rep = rep, .done = done,
			  .max_entries = MASKS_SOCKETS_MAX_ENTRIES, .failing = failing };
	enum masks_result r = MASKS_OK;
	memset(rep, 0, sizeof *rep);
	/* every root at depth 0 in one queue: breadth first across them all */
	for (size_t i = 0; i < nroots && r == MASKS_OK && !w.full; i++) {
		if (roots[i][0] != '/' || under_other_root(roots, nroots, i))
			continue;
		r = walk_entry(&w, roots[i], 0, roots[i], DT_UNKNOWN);
	}
	while (r == MASKS_OK && w.head < w.tail && !w.full) {
		struct walk_dir d = w.queue[w.head++];
		r = walk_dir(&w, &d, d.path);
		free(d.path);
	}
	while (w.head < w.tail)
		free(w.queue[w.head++].path);
	free(w.queue);
	if (err)
		*err = w.err;
	return r;
}

bool masks_refuses(const struct policy_image *img, const char *home, const char *canon,
		   int32_t *rule)
{
	struct policy_verdict v = policy_decide_open(img, canon, POLICY_FILE_READ);
	if (rule)
		*rule = v.rule;
	if (v.decision == POLICY_DENY && v.rule >= 0)
		return true;
	size_t nh = home ? strlen(home) : 0;
	if (!home || strncmp(canon, home, nh) != 0 || canon[nh] != '/')
		return false;
	const char *rel = canon + nh + 1;
	for (size_t i = 0; i < NELEM(mandatory_masks); i++) {
		size_t k = strlen(mandatory_masks[i]);
		if (strncmp(rel, mandatory_masks[i], k) == 0 && (rel[k] == '\0' || rel[k] == '/')) {
			if (rule)
				*rule = -1;
			return true;
		}
	}
	return false;
}

const char *masks_result_text(enum masks_result r)
{
	static const char *const text[MASKS_RESULT_MAX] = {
		[MASKS_OK] = "no error",
		[MASKS_NO_MEMORY] = "out of memory",
		[MASKS_MASK_FAILED] = "cannot add the mask",
	};
	return (unsigned)r < MASKS_RESULT_MAX ? text[r] : "?";
}
