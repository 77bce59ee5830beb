/* sandbox.h — the bubblewrap command line of a session, built as typed setup operations, then rendered. */
#ifndef AIRLOCK_SANDBOX_SANDBOX_H
#define AIRLOCK_SANDBOX_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include "launcher/sandbox/copies.h"
#include "policy/policy.h"

/* What the sandbox is built from.  Strings are borrowed. */
struct sandbox_config {
	const struct policy *policy;    /* sandbox.read / write / network, deny-read rules */
	const struct policy_image *img; /* decides which existing paths deny-read rules mask */
	const char *home;               /* absolute */
	const char *workspace;          /* absolute, canonical: bound read-write */
	const char *cwd;                /* absolute: the agent starts here (inside the workspace or not) */
	const char *session_dir;        /* host path, bound read-only at RUN_SANDBOX_DIR */
	const char *shim_path;          /* host path of the shim, bound read-only over
					   RUN_SANDBOX_DIR/RUN_SHIM_NAME (the session dir may be noexec) */
	const char *policy_file;        /* host path of the policy file, or NULL (built-in) */
	const char *log_file;           /* absolute host path of the audit log (bound read-only
					   over itself when it is writable inside), or NULL */
	bool unprivileged;              /* not root: --unshare-user */
	bool own_tty;                   /* the agent runs on a pseudo-terminal airlock owns (the
					   TUI's): no --new-session, it keeps it as its terminal */
	int seccomp_fd;                 /* fd for --seccomp (inherited by bwrap), or -1 */
	bool netns;                     /* bwrap starts inside the sandbox's own network namespace
					   (network: proxy): no --unshare-net */
	int resolv_fd;                  /* with netns: the resolv.conf text for --ro-bind-data, or -1 */
	const char *resolv_path;        /* where /etc/resolv.conf really is (it may be a symlink) */
	int hosts_fd;                   /* the sandbox's own /etc/hosts text (sandbox_hosts_text())
					   for --ro-bind-data, or -1: the host's file shows.  Bound
					   under network: proxy and none, never under host */
	const char *hosts_path;         /* where /etc/hosts really is (it may be a symlink) */
	char *const *env;               /* NAME=VALUE, NULL-terminated: the agent's whole environment */
	const struct copy_spec *extra_copies; /* runs-later paths besides the built-in list
						 (an agent profile's state files), or NULL */
	size_t nextra_copies;
	const struct copy_bind *copy_binds; /* the session copies' mounts (copies_binds()), bound
					       in order after the workspace; NULL: no copies made
					       (the runs-later paths that exist are then bound
					       read-only, as protections) */
	size_t ncopy_binds;
	const char *const *copy_hidden; /* copies_hidden(): hidden inside, or NULL */
	bool hold;                      /* the sandbox waits, built, before its agent starts, until
					   the backend's release() (backend.h held()) */
	const char *landlock_path;      /* host path of the Landlock helper (session_find_landlock()),
					   bound read-only over RUN_SANDBOX_DIR/RUN_LANDLOCK_NAME and
					   run before the program; NULL: no Landlock ruleset */
	int landlock_abi;               /* with landlock_path: the ABI it applies (landlock_abi());
					   0: none, the helper runs for checkpoint_fd only */
	int checkpoint_fd;              /* the checkpoint's socket (supervise.h), inherited by bwrap
					   and given to the helper's --notify; -1: no checkpoint */
	const char *checkpoint_root;    /* the checkpoints' directory (store_root()): hidden inside
					   when it would show; NULL: none */
	const char *program;            /* absolute path of the agent's program */
	char *const *argv;              /* the agent's argv, NULL-terminated (argv[0] as given) */
};

/* What sandbox_build() found worth telling the user. */
struct sandbox_report {
	unsigned masks;        /* paths masked because a deny-read rule or the mandatory list names them */
	bool masks_capped;     /* the bounded walk stopped early: more may exist */
	unsigned walked;       /* directory entries examined */
	unsigned sockets;      /* unix sockets of the host masked (masks.h): in the workspace and home,
				  and in the other host trees the sandbox shows; not counted in masks */
	bool sockets_capped;   /* the socket walk of the other host trees stopped at a bound (depth or
				  entries: sockets_walked == MASKS_SOCKETS_MAX_ENTRIES) */
	unsigned sockets_walked; /* directory entries that walk examined */
	bool network_rules_ignored; /* --unshare-net with network rules: network: none, or proxy without netns */
	bool home_shown;       /* home is an allowlist: an empty tmpfs, the tools' trees bound on it */
	const char *open_gate; /* set by the caller after the build, for the log: "fanotify" or "off: why" */
	const char *checkpoint; /* likewise: "link STORE", "copy STORE" or "off: why" */
};

/*
 * Builds the argv for bwrap_path (NULL-terminated, malloc'ed; free with
 * sandbox_argv_free()).  Returns 0, or -errno with a message in err.
 */
int sandbox_build(const struct sandbox_config *cfg, const char *bwrap_path, char ***argv_out,
		  struct sandbox_report *rep, char *err, size_t errlen);

/*
 * The sandbox's own /etc/hosts (hosts(5)): loopback names only — localhost
 * on 127.0.0.1 and ::1, ip6-localhost and ip6-loopback on ::1, and hostname
 * (the name the sandbox's UTS namespace keeps: bwrap --unshare-uts copies
 * the host's) on both, when hostname is a plain host name (RFC 1123 §2.1:
 * letters, digits, '-' and '.', at most 253 characters; "localhost" and
 * "(none)" are left out, as are NULL and "").  None of the host's other
 * names: inside the proxy's namespace every address is local, so a name
 * resolved from the host's file would send a program that ignores the proxy
 * variables to an address the proxy can only decide as an address
 * (proxy/destination.c).  Writes the text, NUL-terminated, to buf (cap
 * bytes) and returns its length, or -ENOSPC when it does not fit (512
 * bytes always do).  No allocation.
 */
int sandbox_hosts_text(const char *hostname, char *buf, size_t cap);

/* Frees an argv from sandbox_build().  Accepts NULL. */
void sandbox_argv_free(char **argv);

#endif
