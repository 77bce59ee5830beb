/* copies.h — session copies: files that run code later, outside the sandbox, are written to a copy inside; what is safe is applied back at the end. */
#ifndef AIRLOCK_SANDBOX_COPIES_H
#define AIRLOCK_SANDBOX_COPIES_H

#include <stdbool.h>
#include <stddef.h>

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
 */

/* How a copy's changes reach the host at the end of the session. */
enum copy_apply {
	COPY_KEEP_ASIDE,  /* any change is kept aside; nothing is applied */
	COPY_GIT_CONFIG,  /* a git config file: changes of safe keys (user.*, branch.*, ...) are
			     applied, the rest kept aside */
	COPY_JSON_KEYS,   /* a JSON file: changes are applied unless they touch one of
			     copy_spec.keys (dotted paths, '*' one level: "hooks",
			     "projects.*.mcpServers"); then those keys keep their launch value
			     and the whole new file is kept aside */
};

/* One runs-later path, as a profile or the built-in list names it.  Strings are static. */
struct copy_spec {
	const char *path;        /* "./REL" (workspace), "~/REL" (home) or absolute */
	bool dir;                /* a directory (copied whole) rather than a file */
	enum copy_apply apply;
	const char *const *keys; /* COPY_JSON_KEYS: NULL-terminated list; else NULL */
};

#endif
