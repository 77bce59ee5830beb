/*
 * masks.h — the mask walks: which existing paths under the workspace and home
 * a deny-read rule (or the mandatory list of credential stores) names, and
 * which unix sockets of the host the sandbox would show, so the kernel layer
 * can hide them.  What it misses stays readable inside the
 * sandbox to anything that bypasses the shim (a static binary, a raw
 * syscall): it is the security-critical part of the sandbox builder, kept
 * here on its own, as bubblewrap keeps its bind mounts in bind-mount.c.
 *
 * It does not mount anything: it asks the backend building the sandbox
 * (struct masks_target) whether a path shows inside and tells it what to
 * hide, and returns a result and the path it failed at instead of printing.
 */
#ifndef AIRLOCK_SANDBOX_MASKS_H
#define AIRLOCK_SANDBOX_MASKS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* The walk's bounds: directory entries examined in all, and directory depth below a root. */
#define MASKS_WALK_MAX_ENTRIES 20000u
#define MASKS_WALK_MAX_DEPTH 12u
/* The socket walk's bound on entries (its depth bound is MASKS_WALK_MAX_DEPTH). */
#define MASKS_SOCKETS_MAX_ENTRIES 50000u

/* What the walk asks of the sandbox being built. */
struct masks_target {
	/* True when the host's path (canonical) shows inside the sandbox as built so far. */
	bool (*visible)(void *ctx, const char *canon);
	/*
	 * Hides canon (is_dir: a directory) inside the sandbox; from then on
	 * visible() is false for it and all below.  0, or -errno.
	 */
	int (*mask)(void *ctx, const char *canon, bool is_dir);
	/*
	 * True when something strictly below the host's directory canon shows
	 * inside though canon itself does not (home as an allowlist: its
	 * tools' trees bound on an empty tmpfs), so the walk goes down to
	 * them.  NULL: never.
	 */
	bool (*below)(void *ctx, const char *canon);
	/*
	 * True when an entry of the mandatory list that does not show inside
	 * (home as an allowlist) should get an empty mask all the same, so
	 * that reading or removing it meets a rule and is logged instead of
	 * failing unseen with ENOENT.  NULL: never.
	 */
	bool (*placeholder)(void *ctx, const char *canon);
	void *ctx;
	/*
	 * True when the policy names the host's path (canonical) itself, so a
	 * socket there stays reachable (sandbox.h: an exact sandbox.read or
	 * sandbox.write entry).  NULL: none is named.
	 */
	bool (*named)(void *ctx, const char *canon);
};

/* What the walk did. */
struct masks_report {
	unsigned masks;   /* paths hidden (mask() calls that succeeded) */
	unsigned sockets; /* of those, unix sockets hidden for being one (not named by a deny rule) */
	bool capped;      /* a bound stopped the walk early: more may exist */
	unsigned walked;  /* directory entries examined */
};

enum masks_result {
	MASKS_OK = 0,
	MASKS_NO_MEMORY,   /* the walk's queue could not grow */
	MASKS_MASK_FAILED, /* target->mask() failed */
	MASKS_RESULT_MAX
};

/*
 * Hides, in this order: each entry of the mandatory list (.ssh, .aws,
 * .gnupg, .netrc, .kube, ...; see masks.c) that exists under home, at its
 * canonical place; then every existing path in the workspace and in home
 * that img denies reading by a rule (not by the default), found with a
 * breadth-first walk, so shallow secrets (.env, ~/.ssh) come before a bound
 * hits (MASKS_WALK_MAX_ENTRIES entries in all, MASKS_WALK_MAX_DEPTH levels:
 * either sets rep->capped).
 *
 * The walk never follows a symlink: a link a rule names, or whose target a
 * rule names, has its target hidden at its canonical place (dangling links
 * hide nothing).  It does not descend what is hidden, what does not show
 * inside (target->visible()), the other root (home holding the workspace is
 * walked once), nor the trees tools fill by the ten thousand (.git/objects,
 * node_modules, caches, package stores: secrets there are still refused by
 * the shim's rules).  A directory it cannot read is skipped: the agent, with
 * the same credentials, cannot list it either.
 *
 * Every unix socket (S_ISSOCK) the walk meets, or a symlink it meets leads
 * to, is hidden too, unless target->named() names it: connect(2) needs only
 * write permission on the socket's inode, not a writable mount, so the
 * read-only tree alone lets a sandboxed process reach a host service
 * (unix(7), path_resolution(7)).  /dev/null over it makes connect() fail
 * with ECONNREFUSED.
 *
 * workspace is absolute and canonical; home absolute (made canonical here;
 * no home: the mandatory list and home's walk are skipped).  *rep is filled
 * (zeroed first).  On failure, failing (PATH_MAX bytes, or NULL) holds the
 * path it failed at, and *err (or NULL) the -errno mask() returned.
 */
enum masks_result masks_apply(const struct policy_image *img, const char *workspace,
			      const char *home, const struct masks_target *target,
			      struct masks_report *rep, char *failing, int *err);

/*
 * The socket walk: hides every unix socket (S_ISSOCK) below roots (nroots
 * absolute, canonical paths: the host trees the sandbox shows; a root
 * inside another one, or given twice, is walked once; relative ones are
 * ignored) that target->visible() says shows inside and target->named()
 * does not name, and each socket a symlink met there leads to.  Breadth
 * first across all the roots together, so the shallow places services put
 * sockets in (/srv/x/api.sock, /var/lib/x/x.sock) are found before a bound
 * hits: MASKS_SOCKETS_MAX_ENTRIES entries in all, MASKS_WALK_MAX_DEPTH
 * levels below a root (either sets rep->capped).
 *
 * Not descended: done (NULL-terminated list of canonical paths, or NULL:
 * the workspace and home, which masks_apply() walks, and the sandbox's own
 * session directory), what does not show inside, the system trees the
 * sandbox replaces or no service puts sockets in (/proc, /sys, /dev, /run,
 * /tmp, /boot, /usr but /usr/local, /var/cache, /var/log, package and image
 * stores such as /var/lib/dpkg and /var/lib/docker/overlay2; see masks.c),
 * the tool caches masks_apply() skips too, and directories it cannot read
 * (the agent, with the same credentials, cannot list them either; but a
 * socket whose name it knows in a directory it may search and not read
 * stays reachable).
 *
 * Only what exists now is found: a socket created on the host after this
 * call under a visible path stays reachable.  *rep is filled (zeroed
 * first); rep->masks == rep->sockets.  Returns and fills failing and *err
 * as masks_apply() does.
 */
enum masks_result masks_sockets(const char *const *roots, size_t nroots, const char *const *done,
				const struct masks_target *target, struct masks_report *rep,
				char *failing, int *err);

/*
 * True when reading canon (absolute, canonical) is refused by what
 * masks_apply() hides: a deny-read rule of img (not the default), or an
 * entry of the mandatory list under home (canonical; NULL: none) or below
 * it.  *rule (when not NULL) receives the deciding rule's index, or -1 for
 * the mandatory list.  For the kernel layer's later checks (open_gate.h):
 * a path that appears during the session is decided as the walk would have.
 */
bool masks_refuses(const struct policy_image *img, const char *home, const char *canon,
		   int32_t *rule);

/* What r means, for a message: "out of memory", ... */
const char *masks_result_text(enum masks_result r);

#endif
