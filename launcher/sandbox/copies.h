/* copies.h — session copies: files that run code later, outside the sandbox, are written to a copy inside; what is safe is applied back at the end. */
#ifndef AIRLOCK_SANDBOX_COPIES_H
#define AIRLOCK_SANDBOX_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A "runs-later" path is one a program outside the sandbox will execute or
 * obey after the session: .git/hooks, .git/config, .claude/settings.json,
 * .mcp.json, .codex/, .vscode/tasks.json, .envrc, an agent's own settings in
 * its home state directory.  Inside the sandbox such a path is a session
 * copy bound over the real one, so every write to it (by a dynamically
 * linked program, a static one or a raw syscall) lands in the copy, whether
 * the path existed at launch or not.  At the end of the session each copy is
 * compared with the state it had at launch and, by its kind, applied back,
 * partly applied, or kept aside (with an audit event and a message saying
 * where).
 *
 * Where things are (STATE: $XDG_STATE_HOME/airlock, else ~/.local/state/airlock):
 *
 *   STATE/sessions/ID/N/work   the working copy of spec N, bound read-write
 *                              over the real path inside the sandbox
 *   STATE/sessions/ID/N/snap   its state at launch (absent: the path was)
 *   STATE/kept/ID/workspace/REL, STATE/kept/ID/home/REL, STATE/kept/ID/root/ABS
 *                              what was kept aside at the end
 *
 * The sessions and kept directories are hidden inside the sandbox (an empty
 * read-only tmpfs over each).  Copies live on disk, not in /run (a small
 * tmpfs), and never inside the workspace.
 *
 * A path missing at launch gets an empty placeholder on the host (a
 * directory, or an empty file; missing parents too) as the mount point;
 * inside, its copy starts empty (a COPY_JSON_KEYS file as "{}", which agents
 * read as "nothing yet"; an empty .mcp.json is what Claude Code accepts
 * silently); placeholders still empty at the end are removed.  A launcher killed with
 * SIGKILL leaves only those empty placeholders (and STATE/sessions/ID, with
 * its launcher.pid and the list of its placeholders) on the host: nothing
 * written inside reaches the real path; the next copies_prepare() of the
 * same user removes the empty placeholders and store of every session whose
 * launcher no longer exists.
 *
 * A file (not directory) copy is a mount point inside: writing it in place
 * works, replacing it by rename(2) fails with EBUSY (editors' and some
 * programs' temp-file-and-rename).  That is why .git is handled as a
 * directory (COPY_GIT_DIR) and agent config directories are copied whole.
 */

/* How a copy's changes reach the host at the end of the session. */
enum copy_apply {
	COPY_KEEP_ASIDE,  /* any change is kept aside; nothing is applied (file or directory:
			     per file, each new, changed or deleted file one event) */
	COPY_GIT_CONFIG,  /* a git config file: changes of safe keys (user.*, branch.*, ...,
			     core.hooksPath set to exactly /dev/null: hooks off) are
			     applied, the rest kept aside */
	COPY_JSON_KEYS,   /* a JSON file: changes are applied unless they touch one of
			     copy_spec.keys (dotted paths, '*' one level: "hooks",
			     "projects.*.mcpServers"); then those keys keep their launch value
			     and the whole new file is kept aside */
	COPY_TOP_SCRIPTS, /* a directory (dir must be true) the agent writes in place, not a
			     copy: its top-level files are recorded at launch (a copy of each of
			     at most 64 KiB); after the session each new or changed one that
			     looks like a script (executable, "#!" first, or .sh, .bash, .zsh,
			     .py, .js, .mjs, .cjs, .ts, .rb, .pl; a symlink of such a name) and
			     is not a known state file (history.jsonl, .credentials.json, *.lock,
			     *.backup*) is moved aside (kept_aside): its launch version put back,
			     or removed.  Settings elsewhere may name such a script (a status
			     line, a hook).  Subdirectories are not looked at; a killed
			     launcher's session is not checked */
	COPY_GIT_DIR,     /* a .git directory (dir must be true): its top-level files are copies
			     (config merged as COPY_GIT_CONFIG; HEAD, index, packed-refs, *_HEAD,
			     COMMIT_EDITMSG, description, shallow applied unless the host's
			     changed meanwhile, HEAD only when git can read it; the deletion
			     of HEAD or config never applied: git cannot use the repository
			     without them; others kept aside), hooks/ a copy (new or
			     changed hooks kept aside, new *.sample applied), info/ a copy
			     applied back file by file (its exclude lists the placeholder
			     files inside only, so git status does not show them), objects/,
			     refs/, logs/, lfs/, rr-cache/, branches/ bound read-write straight
			     through (never copied: no start-up cost for a big repository),
			     modules/ and worktrees/ read-only, other directories copies kept
			     aside when changed.  Missing at launch (`git init` inside): what
			     was made is applied by the same rules.  A .git that is a file
			     (gitdir: pointer) or a symlink is bound read-only. */
};

/* One runs-later path, as a profile or the built-in list names it.  Strings are static. */
struct copy_spec {
	const char *path;        /* "./REL" (workspace), "~/REL" (home) or absolute */
	bool dir;                /* a directory (copied whole) rather than a file */
	enum copy_apply apply;   /* a directory: COPY_KEEP_ASIDE, COPY_TOP_SCRIPTS or COPY_GIT_DIR */
	const char *const *keys; /* COPY_JSON_KEYS: NULL-terminated list; else NULL */
};

/* One mount the sandbox makes for the copies, in this order.  Strings owned by the copies. */
struct copy_bind {
	const char *src;  /* host path (the working copy, or the real path for read-only and
			     bound-through ones) */
	const char *dest; /* the real path, where it shows inside */
	bool ro;
};

/* What copies_prepare() needs.  Strings borrowed. */
struct copies_config {
	const char *workspace;  /* absolute, canonical */
	const char *home;       /* absolute */
	const char *session_id; /* the session's id (session.h) */
	const struct copy_spec *extra; /* besides the built-in list (a profile's), or NULL; an
					  extra spec of the same path replaces the built-in one */
	size_t nextra;
};

/* One session's copies. */
struct copies;

/*
 * The built-in list, relative to the workspace: .git (COPY_GIT_DIR),
 * .claude/, .codex/, .gemini/, .vscode/, .idea/, .cursor/, .devcontainer/
 * (directories, COPY_KEEP_ASIDE), .mcp.json, .envrc (files, COPY_KEEP_ASIDE);
 * git hooks kept in the tree (.husky/, .pre-commit-config.yaml); tool
 * configuration that runs code on ordinary use (.npmrc, .yarnrc.yml,
 * .pnpmfile.cjs, .cargo/, mise.toml, .mise.toml, .dir-locals.el, .exrc,
 * .vimrc, .nvimrc, .nvim.lua); other agents' and editors' project
 * configuration (.amazonq/, .roo/, .kiro/, .zed/, .continue/, .windsurf/,
 * .clinerules/, .aider.conf.yml); all COPY_KEEP_ASIDE (copies.c says what
 * each runs).  *n receives the count.  Static.
 */
const struct copy_spec *copies_builtin(size_t *n);

/*
 * Makes the working copies and launch snapshots of the built-in list and
 * cfg->extra under STATE/sessions/ID/, and the placeholders of missing
 * paths.  When the workspace's .git/config sets core.hooksPath to a
 * directory inside the workspace (husky, a hooks/ in the tree; relative to
 * the workspace, ~/ or absolute), that directory is a COPY_KEEP_ASIDE copy
 * too (not when it is in .git, or in or over another copy).  Then records the runs-later files below the workspace's top level
 * (a bounded walk: nested repositories' hooks and config, sub/.claude/
 * settings*.json, sub/.mcp.json, sub/.codex/, sub/.vscode/tasks.json,
 * sub/.envrc, NAME.code-workspace at any level...; a copy of each of at most 64 KiB under
 * STATE/sessions/ID/nested/, the list in STATE/sessions/ID/nested.list),
 * for copies_finish() to find what changed.  First, the stores of sessions
 * whose launcher died are swept: placeholders removed, their nested files
 * checked (events kept for this session's copies_finish()).  Returns 0 and *out (free with copies_free()), or -errno with a
 * message in err (everything made so far removed).
 */
int copies_prepare(const struct copies_config *cfg, struct copies **out, char *err, size_t errlen);

/*
 * "AIRLOCK_PLACEHOLDERS=NAME:NAME...:/WORKSPACE" — the placeholders this
 * session made in the workspace's top level (".claude", ".mcp.json"...),
 * for the agent's environment: the shim leaves an entry of that directory
 * with one of these names out of readdir(3) and scandir(3) while it is
 * empty (a directory without entries, a file of size 0), so `ls -la`,
 * `find`, `git status --ignored` inside list what a bare run lists.  At
 * most 64 names (the shim's bound; more are left out of the variable and
 * show).  NULL when there is none.  Valid until copies_free().
 */
const char *copies_placeholder_env(const struct copies *c);

/* The mounts to make, in order (after the workspace's bind); *n receives the count.  Valid until copies_free(). */
const struct copy_bind *copies_binds(const struct copies *c, size_t *n);

/*
 * Host directories to hide inside the sandbox (STATE/sessions, STATE/kept),
 * NULL-terminated.  Valid until copies_free().
 */
const char *const *copies_hidden(const struct copies *c);

/* Where it ended: what copies_finish() did, in counts. */
struct copies_result {
	unsigned applied; /* paths (or keys' files) applied to the host */
	unsigned kept;    /* paths kept aside */
};

struct audit_log;

/*
 * The session is over (the sandbox gone, so nothing writes the copies any
 * more): each copy compared with its launch snapshot and applied, partly
 * applied or kept aside by its kind.  A copy whose real path changed on the
 * host meanwhile is kept aside, never merged.  One audit event per path
 * (event "copy_applied" or "kept_aside", file: the host path, kept: where it
 * was kept, message: what changed) in log (NULL: none).  The message for
 * the user (what was kept aside, where, how to apply it by hand) is built,
 * see copies_message().  Then the walk below the top level again: each
 * new or changed runs-later file there is moved into kept/ID/workspace/REL
 * (kept_aside; its launch copy put back when there is one; a nested git
 * config merged by safe key, or, made in the session, its keys that run
 * programs removed); a walk that hit its bound (100,000 entries, 24 levels)
 * writes a "nested_walk_capped" event.  Call it once.
 */
void copies_finish(struct copies *c, struct audit_log *log, struct copies_result *res);

/*
 * The text copies_finish() built for the user's terminal ("" when nothing
 * was kept aside); control and bidi characters in the paths and messages
 * it names are escaped (\n, \r, \xNN, as `airlock log` prints them).
 * Valid until copies_free().
 */
const char *copies_message(const struct copies *c);

struct policy;

/*
 * --no-sandbox: no mounts, so no copies.  The shim is the only layer left;
 * this appends to p (before it is compiled) one deny rule for writes per
 * runs-later path of the built-in list and of extra: a directory and
 * everything below it, a file, .git's hooks/, config and config.worktree,
 * a COPY_TOP_SCRIPTS directory's top-level *.sh, *.py, *.js, *.ts.
 * Writing them then fails (EACCES) in dynamically linked programs, and
 * legitimate writes (git config user.email) fail too: static programs and
 * raw syscalls are not stopped (the log's session_start says --no-sandbox).
 * Each rule's reason says so.  0 or -ENOMEM.
 */
int copies_no_sandbox_rules(struct policy *p, const struct copy_spec *extra, size_t nextra);

/*
 * Removes the working copies and snapshots, and the placeholders still empty
 * (with or without copies_finish(): without it, nothing is applied).
 * Accepts NULL.
 */
void copies_free(struct copies *c);

/*
 * Told with each host path copies_finish() is about to change, replace,
 * delete or make (absolute), before it does: the workspace's checkpoint
 * (launcher/checkpoint/supervise.h) saves it, as it saves what the sandbox
 * changes itself.
 */
typedef void (*copies_host_fn)(void *ctx, const char *host_path);

/* Sets the hook (NULL: none) for the next copies_finish(). */
void copies_set_host_hook(struct copies *c, copies_host_fn fn, void *ctx);

#endif
