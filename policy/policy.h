/* policy.h — airlock's policy engine: YAML policy -> compiled image -> allow / ask / deny. */
#ifndef AIRLOCK_POLICY_H
#define AIRLOCK_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Three stages, three owners:
 *
 *   policy_load_file() / policy_load_buffer()   YAML text -> struct policy
 *       libyaml; strict validation; needs the launcher's libc + libyaml.
 *   policy_compile()                             struct policy -> image blob
 *       expands ~/ and ./ against a struct policy_context, builds indexes.
 *   policy_image_open() + policy_decide_*()      image blob -> decisions
 *       pointer-free, read-only, no allocation, no libyaml: the preload shim
 *       links only this part (policy/image.c and its matchers).
 *
 * The language is described in DESIGN.md ("The policy language") and in
 * README.md; precedence is deny, then ask, then allow, then the default.
 */

/* ---- Shared vocabulary -------------------------------------------------- */

/* The outcome of a decision.  Numeric order is severity order. */
enum policy_decision {
	POLICY_ALLOW = 0,
	POLICY_ASK = 1,
	POLICY_DENY = 2,
	POLICY_DECISION_MAX
};

/* The list a rule sits in.  Numeric order is precedence order. */
enum policy_list {
	POLICY_LIST_DENY = 0,
	POLICY_LIST_ASK = 1,
	POLICY_LIST_ALLOW = 2,
	POLICY_LIST_MAX
};

/* What a rule is about. */
enum policy_rule_kind {
	POLICY_RULE_COMMAND = 0, /* a program started with execve(2) */
	POLICY_RULE_FILE = 1,    /* a path opened, changed or executed */
	POLICY_RULE_NETWORK = 2, /* a destination host:port */
	POLICY_RULE_KIND_MAX
};

/* How a rule's pattern compares (the rule's `match:` key). */
enum policy_match {
	POLICY_MATCH_GLOB = 0, /* glob(7); see README for per-kind details */
	POLICY_MATCH_EXACT = 1,
	POLICY_MATCH_PREFIX = 2, /* whole words (args) / whole components (paths) */
	POLICY_MATCH_REGEX = 3,  /* POSIX ERE, regex(7), anchored at both ends */
	POLICY_MATCH_MAX
};

/* The kinds of action a default applies to: the `default:` keys. */
enum policy_action {
	POLICY_ACTION_EXEC = 0,
	POLICY_ACTION_READ = 1,
	POLICY_ACTION_WRITE = 2,
	POLICY_ACTION_CONNECT = 3,
	POLICY_ACTION_MAX
};

/* File rule actions, as a bit mask (`action:` of a file rule). */
#define POLICY_FILE_READ  (1u << 0)
#define POLICY_FILE_WRITE (1u << 1) /* create, truncate, unlink, rename, link, mkdir, chmod */
#define POLICY_FILE_EXEC  (1u << 2)
#define POLICY_FILE_ALL   (POLICY_FILE_READ | POLICY_FILE_WRITE | POLICY_FILE_EXEC)
#define POLICY_FILE_ACTIONS 3 /* bits in POLICY_FILE_ALL */

/*
 * The `default:` key that decides a file action when no rule does: exactly
 * one POLICY_FILE_* bit in, POLICY_ACTION_MAX for anything else.
 */
static inline enum policy_action policy_file_action_kind(unsigned action)
{
	return action == POLICY_FILE_READ    ? POLICY_ACTION_READ
	       : action == POLICY_FILE_WRITE ? POLICY_ACTION_WRITE
	       : action == POLICY_FILE_EXEC  ? POLICY_ACTION_EXEC
					     : POLICY_ACTION_MAX;
}

/* sandbox.network */
enum policy_network_mode {
	POLICY_NETWORK_PROXY = 0, /* default: egress only through airlock's proxy */
	POLICY_NETWORK_NONE = 1,  /* no network namespace route out at all */
	POLICY_NETWORK_HOST = 2,  /* the host's network, unfiltered by the kernel layer */
	POLICY_NETWORK_MODE_MAX
};

/*
 * The names of the vocabulary: one table each (policy/names.c), the words a
 * policy file spells and the audit log writes.  A row pairs a name with its
 * value; every table but the file actions' is in value order (row i has
 * value i), the file actions' is in bit order (read, write, exec).
 * tests/unit/test_names.c checks both, and that names are distinct.
 */
struct policy_word {
	const char *name;
	int value;
};

extern const struct policy_word policy_decision_words[POLICY_DECISION_MAX];
extern const struct policy_word policy_list_words[POLICY_LIST_MAX];
extern const struct policy_word policy_rule_kind_words[POLICY_RULE_KIND_MAX];
extern const struct policy_word policy_match_words[POLICY_MATCH_MAX];
extern const struct policy_word policy_action_words[POLICY_ACTION_MAX];
extern const struct policy_word policy_file_action_words[POLICY_FILE_ACTIONS];
extern const struct policy_word policy_network_mode_words[POLICY_NETWORK_MODE_MAX];

/* Returns "allow", "ask", "deny" (or "?" out of range).  Static storage. */
const char *policy_decision_name(enum policy_decision d);
/* Returns "deny", "ask", "allow" (or "?").  Static storage. */
const char *policy_list_name(enum policy_list l);
/* Returns "command", "file", "network" (or "?").  Static storage. */
const char *policy_rule_kind_name(enum policy_rule_kind k);
/* Returns "glob", "exact", "prefix", "regex" (or "?").  Static storage. */
const char *policy_match_name(enum policy_match m);
/* Returns "exec", "read", "write", "connect": the `default:` keys (or "?").  Static storage. */
const char *policy_action_name(enum policy_action a);
/* Returns "read", "write" or "exec" for exactly one POLICY_FILE_* bit (else "?").  Static storage. */
const char *policy_file_action_name(unsigned action);
/* Returns "proxy", "none", "host": `sandbox.network` (or "?").  Static storage. */
const char *policy_network_mode_name(enum policy_network_mode m);

/*
 * The value of the row of words (n rows) named s, or -1 when none is (s NULL
 * too).  Names compare byte for byte: "Allow" is not "allow".
 */
int policy_word_parse(const struct policy_word *words, size_t n, const char *s);
/* The decision named s ("allow", "ask", "deny"), or -1. */
int policy_decision_parse(const char *s);
/* The POLICY_FILE_* bit named s ("read", "write", "exec"), or 0. */
unsigned policy_file_action_parse(const char *s);
/* The network mode named s ("proxy", "none", "host"), or -1. */
int policy_network_mode_parse(const char *s);

/* ---- Errors ------------------------------------------------------------- */

/*
 * Where and why loading or compiling failed.  line and column are 1-based and
 * point at the offending YAML node (0 when the error has no position, e.g. an
 * unreadable file).  The rendered form is "file:line:column: message".
 */
struct policy_error {
	char file[1024];
	unsigned line;
	unsigned column;
	char message[512];
};

/*
 * Renders err as "file:line:column: message" (or "file: message" without a
 * position) into buf of size bytes, NUL-terminated, truncating if needed.
 * Returns the length snprintf(3) would have produced.
 */
int policy_error_format(const struct policy_error *err, char *buf, size_t size);

/* ---- Parsed policy (launcher side) ---------------------------------------- */

/* A position in the policy source, 1-based; {0,0} when absent. */
struct policy_pos {
	unsigned line;
	unsigned column;
};

/* One rule from a deny:, ask: or allow: list, as written. */
struct policy_rule {
	enum policy_rule_kind kind;
	enum policy_list list;
	enum policy_match match;
	char *command;     /* owned; COMMAND: program basename or full path */
	char *args;        /* owned; COMMAND: NULL = any arguments */
	char *path;        /* owned; FILE: gitignore-style pattern as written */
	unsigned actions;  /* FILE: POLICY_FILE_* mask; POLICY_FILE_ALL when absent */
	char *destination; /* owned; NETWORK: host:port pattern as written */
	char *reason;      /* owned; NULL when absent */
	struct policy_pos pos;         /* the rule mapping (its first key) */
	struct policy_pos pattern_pos; /* command / path / destination value */
	struct policy_pos args_pos;    /* args value ({0,0} when absent) */
};

/* One `sandbox.env` entry. */
struct policy_env_var {
	char *name;  /* owned */
	char *value; /* owned */
};

/* The `sandbox:` section: the kernel layer's settings. */
struct policy_sandbox {
	char **read;  /* owned; sandbox.read paths as written (~/, ./ unexpanded) */
	size_t nread;
	char **write; /* owned; sandbox.write paths as written */
	size_t nwrite;
	enum policy_network_mode network; /* POLICY_NETWORK_PROXY when absent */
	bool process_spawn;               /* true when absent */
	struct policy_env_var *env;       /* owned; sandbox.env in file order */
	size_t nenv;
	char **env_passthrough; /* owned; names; the built-in list when absent */
	size_t nenv_passthrough;
};

/* Bits of policy_limits.set: which limits the policy names. */
enum policy_limit_bit {
	POLICY_LIMIT_CPU_CORES = 1u << 0,
	POLICY_LIMIT_MEMORY_MB = 1u << 1,
	POLICY_LIMIT_DISK_MB = 1u << 2,
	POLICY_LIMIT_MAX_PROCESSES = 1u << 3,
	POLICY_LIMIT_EXEC_TIMEOUT = 1u << 4,
	POLICY_LIMIT_SESSION_TIMEOUT = 1u << 5,
	POLICY_LIMIT_MAX_EGRESS_BYTES = 1u << 6,
};

/* The `limits:` section.  A limit whose bit is clear in `set` is absent. */
struct policy_limits {
	unsigned set;              /* POLICY_LIMIT_* bits */
	double cpu_cores;          /* > 0 */
	uint64_t memory_mb;        /* MiB */
	uint64_t disk_mb;          /* MiB */
	uint64_t max_processes;
	uint64_t exec_timeout;     /* seconds */
	uint64_t session_timeout;  /* seconds */
	uint64_t max_egress_bytes; /* bytes */
};

/*
 * The `checkpoint:` section (launcher/checkpoint/supervise.h): the undo
 * store of each session's workspace.  Absent: the values below.
 */
struct policy_checkpoint {
	bool enabled;       /* `enabled`, true: take a checkpoint when the machine can */
	bool require;       /* `require`, false: refuse to run when it cannot (--require-undo) */
	bool ignored;       /* `ignored`, false: cover git-ignored paths too (node_modules/, build/) */
	uint64_t keep;      /* `keep`, 20: ended checkpoints kept, newest first */
	uint64_t keep_days; /* `keep_days`, 14: an ended checkpoint older than this is removed */
};

/* A whole policy as loaded and validated.  Create with policy_load_*(). */
struct policy {
	char *source;     /* owned; file name used in positions ("<default>" for the built-in one) */
	unsigned version; /* always 1 today */
	enum policy_decision defaults[POLICY_ACTION_MAX];
	unsigned ask_timeout;      /* seconds; 60 when absent */
	struct policy_rule *rules; /* owned; all lists, in file order */
	size_t nrules;
	struct policy_sandbox sandbox;
	struct policy_limits limits;
	struct policy_checkpoint checkpoint;
	char *profile;                 /* owned; the `profile:` key as written (an agent profile's
					  name, "none" or "auto"), NULL when absent; the launcher
					  checks the name (launcher/profiles/profile.h) */
	struct policy_pos profile_pos; /* its value's position, {0,0} when absent */
};

/* Largest policy file accepted, and the deepest YAML nesting. */
#define POLICY_MAX_FILE_SIZE (1024u * 1024u)
#define POLICY_MAX_DEPTH 64u

/*
 * Reads and validates the YAML policy at path (at most POLICY_MAX_FILE_SIZE
 * bytes).  path must be a regular file: it is opened without blocking and
 * checked with fstat(2) before it is read, so a FIFO, a device or a
 * directory is an error naming its kind, never a wait.  Returns a new policy owned by the caller (free with policy_free()),
 * or NULL with *err filled: file:line:column and a message naming what is
 * wrong (unknown or duplicate key, wrong type, bad pattern, ...).  Nothing
 * partially loaded is ever returned.  err must not be NULL.
 */
struct policy *policy_load_file(const char *path, struct policy_error *err);

/*
 * As policy_load_file() on len bytes at buf; name is used as the file name in
 * errors and rule positions.  buf need not be NUL-terminated.
 */
struct policy *policy_load_buffer(const char *name, const char *buf, size_t len,
				  struct policy_error *err);

/*
 * Appends to p a rule the program makes rather than a file (an agent
 * profile's, --no-sandbox's): list, kind, match and actions as in struct
 * policy_rule (actions: POLICY_FILE_* for a FILE rule, else 0); pattern is the
 * command, path or destination, reason the reason or NULL, both copied.  Its
 * position is {0,0}: no line of a file.  Returns 0, or -ENOMEM with p
 * unchanged.
 */
int policy_rule_add(struct policy *p, enum policy_list list, enum policy_rule_kind kind,
		    enum policy_match match, const char *pattern, unsigned actions,
		    const char *reason);

/* Frees p and everything it owns.  Accepts NULL. */
void policy_free(struct policy *p);

/*
 * The built-in default policy's YAML text (what `airlock init` writes), len
 * bytes, not NUL-terminated; *len receives the length.  Static storage.
 */
const char *policy_default_text(size_t *len);

/* ---- Compile ------------------------------------------------------------ */

/* What patterns are relative to at compile time. */
struct policy_context {
	const char *home;      /* absolute, no trailing '/': expands "~/" and "~" */
	const char *workspace; /* absolute, no trailing '/': expands "./" and relative patterns */
};

/*
 * Compiles p into a policy image: one contiguous, pointer-free blob that
 * policy_image_open() accepts.  "~/" patterns expand against ctx->home,
 * "./" and other relative patterns with a '/' against ctx->workspace.
 * On success *image receives a malloc'ed, 8-byte aligned buffer (owned by the
 * caller, free(3) it) of *size bytes, and 0 is returned.
 * Errors: -EINVAL with *err filled (a pattern the image cannot hold, a
 * missing home), -ENOMEM, -E2BIG (the image would exceed 1 GiB).
 */
int policy_compile(const struct policy *p, const struct policy_context *ctx, void **image,
		   size_t *size, struct policy_error *err);

/* ---- Image and decisions (shim side: no allocation, no libyaml) ------------- */

/* A validated image.  It is the blob itself; its lifetime is the blob's. */
struct policy_image;

/*
 * Validates size bytes at buf (8-byte aligned, e.g. from mmap(2) or
 * policy_compile()) as a policy image: magic, version, size, checksum, then
 * every section, offset, string, index entry and matcher program.  On success
 * stores buf, typed, in *out and returns 0.  Errors: -EINVAL (truncated,
 * corrupt, checksum mismatch; errbuf says what), -ENOTSUP (another image
 * version).  errbuf may be NULL.  Allocates nothing; async-signal-safe.
 */
int policy_image_open(const void *buf, size_t size, const struct policy_image **out, char *errbuf,
		      size_t errlen);

/* The result of a decision: the outcome and the rule that decided. */
struct policy_verdict {
	enum policy_decision decision;
	int32_t rule; /* index into the policy's rules (file order); -1 = the default */
};

/*
 * Two verdicts on one exec (the program as invoked and as resolved, or
 * through the dynamic loader), combined: a rule beats the default, then the
 * more severe decision (deny over ask over allow).  Used alike by the shim
 * and by the launcher when it decides a shim's report again.
 */
static inline struct policy_verdict policy_verdict_stricter(struct policy_verdict a,
							     struct policy_verdict b)
{
	if ((a.rule < 0) != (b.rule < 0))
		return a.rule >= 0 ? a : b;
	return b.decision > a.decision ? b : a;
}

/*
 * Decides an execve(2) of program with argument vector argv.
 * program: the path being executed (absolute when known), or a bare name.
 *   Command rules without '/' compare to its basename, rules with '/' to the
 *   whole string.
 * argv: NULL-terminated; argv[1..] are joined with single spaces for `args`
 *   (argv may be NULL: no arguments).  argv[0] counts only when its basename
 *   names another program than program's (`exec -a git-push git`, which git
 *   runs as push; a multi-call binary run as `rm`): command rules for that
 *   name are tried too, and may make the verdict stricter (a rule asking or
 *   denying more), never looser, since argv[0] is the caller's to choose.
 *
 * Two forms of one command.  When the program's basename is a CLI in
 * policy/cli.c's table (git, npm, pip, python, cargo, docker, kubectl, ...),
 * command rules are tried against the command as given (the raw form,
 * exactly as before) and against its normal form: the global options before
 * the subcommand removed (`git -c k=v -C dir commit -m x` is `git commit -m
 * x`), and for a module runner the module as the program (`python3 -m pip
 * install x` is `pip install x`; such a program has no path, so only rules
 * without '/' can match it).  The two verdicts combine as
 * policy_verdict_stricter() does: a rule beats the default, then deny over
 * ask over allow (on a tie, the raw form's verdict is the one taken).  So a policy means what it meant, and `git -c
 * a=b push --force` meets a rule for `push --force`.  Where the options
 * cannot be read for sure (one the table does not list, "--", no
 * subcommand), there is no normal form and the raw one alone decides.  File
 * exec rules see the program as given, once.
 *
 * Never allocates on the heap (arguments over 16 KiB joined are staged in an
 * anonymous mmap(2); if that fails the verdict is deny, rule -1).  Safe in a
 * vfork(2) child.
 */
struct policy_verdict policy_decide_exec(const struct policy_image *img, const char *program,
					 const char *const *argv);

/*
 * As policy_decide_exec(), and *normal_form (when not NULL) says whether the
 * verdict is the normal form's (policy/cli.h: cli_normalize() on program's
 * basename and argv gives that form), not the raw form's.
 */
struct policy_verdict policy_decide_exec_form(const struct policy_image *img, const char *program,
					      const char *const *argv, bool *normal_form);

/*
 * As policy_decide_exec() with the arguments already joined: args points at
 * args_len bytes ("" for none), not necessarily NUL-terminated.  The normal
 * form is found by splitting args at every space, so an argument holding a
 * space reads as two words: a caller with the real argv uses
 * policy_decide_exec(), which reads the words from it.
 */
struct policy_verdict policy_decide_exec_joined(const struct policy_image *img, const char *program,
						const char *args, size_t args_len);

/*
 * Decides an access to path for one action (exactly one POLICY_FILE_* bit).
 * path must be canonical: absolute, no "." / ".." / "//" components, symlinks
 * resolved as the kernel would (the shim's and `airlock check`'s job).  A
 * rule matches the path or any directory above it (gitignore semantics).
 * Any other action value yields deny, rule -1.
 */
struct policy_verdict policy_decide_open(const struct policy_image *img, const char *path,
					 unsigned action);

/*
 * Decides a connection to host:port.  host is a DNS name (compared
 * case-insensitively, a trailing '.' ignored) or an IP literal in any form
 * inet_aton(3) or inet_pton(3) accepts (IPv4-mapped IPv6 counts as IPv4);
 * brackets around an IPv6 literal are accepted.  port is 1..65535.
 */
struct policy_verdict policy_decide_connect(const struct policy_image *img, const char *host,
					    unsigned port);

/* A rule, described from the image.  Strings point into the image. */
struct policy_rule_info {
	const char *file;    /* the policy's source name */
	unsigned line;       /* of the rule's list item */
	unsigned column;
	enum policy_list list;
	enum policy_rule_kind kind;
	enum policy_match match;
	const char *pattern; /* command, path or destination as written */
	const char *args;    /* COMMAND args as written, or NULL */
	unsigned actions;    /* FILE: POLICY_FILE_* mask */
	const char *reason;  /* NULL when the rule has none */
};

/*
 * Describes rule index `rule` of img into *out.  Returns 0, or -ERANGE when
 * rule is not an index of img (including -1, the default).
 */
int policy_rule_describe(const struct policy_image *img, int32_t rule,
			 struct policy_rule_info *out);

/* Number of rules in img. */
uint32_t policy_image_rule_count(const struct policy_image *img);

/* The image's default for one action kind. */
enum policy_decision policy_image_default(const struct policy_image *img, enum policy_action a);

/* The policy's ask_timeout, seconds. */
unsigned policy_image_ask_timeout(const struct policy_image *img);

#endif
