/* profile.c — the built-in agent profiles (one table, as data), choosing one for a session and merging it into the policy. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/profiles/profile.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the table ------------------------------------------------------------------------- */

/*
 * Claude Code (npm @anthropic-ai/claude-code, or the native installer's
 * ~/.local/share/claude/versions/X): state in ~/.claude/ (sessions,
 * projects, todos, shell snapshots, session-env/, .credentials.json) and
 * ~/.claude.json (written as a temporary file in $HOME renamed over it,
 * with a lock directory ~/.claude.json.lock: so it cannot be made writable
 * without the whole home directory, and is left read-only; Claude Code
 * carries on without saving it).  Runs later, outside: settings.json and
 * settings.local.json's hooks, statusLine, apiKeyHelper and the other
 * commands it runs, env (variables every later session gets), permissions
 * (what later sessions may do unasked) and MCP server approvals; plugins'
 * code, hook scripts, skills, subagents, commands, CLAUDE.md; ~/.claude.json's
 * MCP servers, global and per project.
 */
static const char *const claude_settings_keys[] = {
	"hooks", "statusLine", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport",
	"otelHeadersHelper", "fileSuggestion", "env", "permissions", "mcpServers",
	"enabledMcpjsonServers", "enableAllProjectMcpServers", "enabledPlugins",
	"extraKnownMarketplaces", "disableAllHooks", "sandbox", "gcpAuthRefresh", "proxyAuthHelper",
	"subagentStatusLine", "forceLoginMethod", "apiKeyHelperTtl", NULL,
};
static const char *const claude_json_keys[] = {
	"mcpServers", "projects.*.mcpServers", "projects.*.enabledMcpjsonServers",
	"projects.*.enableAllProjectMcpServers", "projects.*.allowedTools",
	/* trust a later session would not ask for again: a folder's trust dialog, bypass mode */
	"projects.*.hasTrustDialogAccepted", "projects.*.hasTrustDialogHooksAccepted",
	"bypassPermissionsModeAccepted", "hasTrustDialogAccepted", NULL,
};
static const struct copy_spec claude_copies[] = {
	{ "~/.claude/settings.json", false, COPY_JSON_KEYS, claude_settings_keys },
	{ "~/.claude/settings.local.json", false, COPY_JSON_KEYS, claude_settings_keys },
	{ "~/.claude.json", false, COPY_JSON_KEYS, claude_json_keys },
	/* code and instructions later sessions run or obey: installed plugins' code (not
	   plugins/store/, the plugins' own key-value state, written every session), hook scripts
	   settings point at, skills (with their scripts), subagents, commands, the user memory */
	{ "~/.claude/plugins/cache", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/plugins/marketplaces", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/hooks", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/skills", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/agents", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/commands", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/CLAUDE.md", false, COPY_KEEP_ASIDE, NULL },
	/* what Claude Code's binary says it runs unasked: the daemon's workers, scheduled jobs */
	{ "~/.claude/daemon.json", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.claude/jobs", true, COPY_KEEP_ASIDE, NULL },
	/* scripts at the top of ~/.claude that settings name (statusLine, hooks): checked after
	   the session, not copied (the directory is the agent's state, written in place) */
	{ "~/.claude", true, COPY_TOP_SCRIPTS, NULL },
};
static const struct profile claude = {
	.name = "claude",
	.title = "Claude Code",
	.programs = (const char *const[]){ "claude", "claude.exe", NULL },
	.path_marks = (const char *const[]){ "/@anthropic-ai/claude-code", "/share/claude/versions/",
					     NULL },
	.state = (const char *const[]){ "~/.claude", NULL },
	.copies = claude_copies,
	.ncopies = NELEM(claude_copies),
	/* Claude Code's network requirements (code.claude.com/docs "network-config"): the API,
	   claude.ai (WebFetch's domain check, sign-in), statsig.anthropic.com (its metrics) — the
	   vendor's own hosts, which see the session anyway.  Not sentry.io, its error reports:
	   anyone's Sentry project takes data there, so it stays an ask. */
	.hosts = (const char *const[]){ "api.anthropic.com:443", "claude.ai:443",
					"statsig.anthropic.com:443", NULL },
	.keys = (const char *const[]){ "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
				       "CLAUDE_CODE_OAUTH_TOKEN", NULL },
	/* a subscription login's OAuth token */
	.agent_only = (const char *const[]){ "~/.claude/.credentials.json", NULL },
	.passthrough = (const char *const[]){ "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
					      "ANTHROPIC_SMALL_FAST_MODEL", NULL },
};

/*
 * Codex's native binary: its Node launcher (bin/codex.js) finds the
 * platform package @openai/codex-linux-ARCH with require.resolve() (that
 * is, in node_modules beside or above the package) and execs
 * vendor/TRIPLE/bin/codex; an older layout kept vendor/ in the package
 * itself.  Every candidate that exists is added to out (malloc'ed, at most
 * cap); returns how many.
 */
static int codex_helpers(const char *resolved, char **out, size_t cap)
{
#if defined(__x86_64__)
	static const char arch[] = "x64", triple[] = "x86_64-unknown-linux-musl";
#elif defined(__aarch64__)
	static const char arch[] = "arm64", triple[] = "aarch64-unknown-linux-musl";
#else
	static const char arch[] = "", triple[] = "";
#endif
	char root[PATH_MAX], path[PATH_MAX];
	size_t n = 0;
	if (!resolved || !arch[0] || snprintf(root, sizeof root, "%s", resolved) >= (int)sizeof root)
		return 0;
	for (int up = 0; up < 2; up++) { /* .../@openai/codex/bin/codex.js -> .../@openai/codex */
		char *slash = strrchr(root, '/');
		if (!slash || slash == root)
			return 0;
		*slash = '\0';
	}
	const char *const forms[] = {
		"%s/../codex-linux-%s/vendor/%s/bin/codex",
		"%s/node_modules/@openai/codex-linux-%s/vendor/%s/bin/codex",
		"%s/vendor/%s/bin/codex",
	};
	for (size_t i = 0; i < NELEM(forms) && n < cap; i++) {
		int len = i < 2 ? snprintf(path, sizeof path, forms[i], root, arch, triple)
				: snprintf(path, sizeof path, forms[i], root, triple);
		char *canon;
		if (len < 0 || (size_t)len >= sizeof path || !(canon = realpath(path, NULL)))
			continue;
		out[n++] = canon;
	}
	return (int)n;
}

/*
 * Codex CLI (npm @openai/codex): a Node launcher execs a static musl
 * binary (no shim in it: the programs it runs are scrubbed, it is not).
 * State in ~/.codex/ (auth.json, sessions, history, logs).  Runs later:
 * config.toml (notify, mcp_servers, profiles' commands), rules/ (command
 * approvals), managed_config.toml, hooks, AGENTS.md, prompts/.
 */
static const struct copy_spec codex_copies[] = {
	{ "~/.codex/config.toml", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.codex/rules", true, COPY_KEEP_ASIDE, NULL },
	/* named in the codex binary (strings): the legacy managed_config.toml layered over
	   config.toml (notify, mcp_servers), hooks.json and hooks/ (commands run on events),
	   AGENTS.md and AGENTS.override.md (instructions every session obeys), prompts/ (custom
	   prompts).  Not skills/: Codex writes its bundled skills into skills/.system itself. */
	{ "~/.codex/managed_config.toml", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.codex/hooks.json", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.codex/hooks", true, COPY_KEEP_ASIDE, NULL },
	{ "~/.codex/AGENTS.md", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.codex/AGENTS.override.md", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.codex/prompts", true, COPY_KEEP_ASIDE, NULL },
};
static const struct profile codex = {
	.name = "codex",
	.title = "Codex CLI",
	.programs = (const char *const[]){ "codex", "codex.js", NULL },
	.path_marks = (const char *const[]){ "/@openai/codex/", "/@openai/codex-linux-", NULL },
	.state = (const char *const[]){ "~/.codex", NULL },
	.copies = codex_copies,
	.ncopies = NELEM(codex_copies),
	/* the API, ChatGPT sign-in and its backend, and ab.chatgpt.com (Codex's analytics): the
	   vendor's own hosts; a session without them asks about each in the TUI */
	.hosts = (const char *const[]){ "api.openai.com:443", "chatgpt.com:443",
					"auth.openai.com:443", "ab.chatgpt.com:443", NULL },
	.keys = (const char *const[]){ "OPENAI_API_KEY", "CODEX_API_KEY", NULL },
	/* its key or ChatGPT login's tokens */
	.agent_only = (const char *const[]){ "~/.codex/auth.json", NULL },
	.passthrough = (const char *const[]){ "OPENAI_BASE_URL", "CODEX_HOME", NULL },
	.helpers = codex_helpers,
};

/*
 * Gemini CLI (npm @google/gemini-cli): state in ~/.gemini/ (oauth_creds,
 * tmp/, history); settings.json runs MCP servers, hooks and tool discovery
 * and call commands; extensions/ bring their own.
 */
static const char *const gemini_settings_keys[] = {
	"mcpServers", "hooks", "tools", "toolDiscoveryCommand", "toolCallCommand",
	"allowMCPServers", "mcp", "security", "advanced", NULL,
};
static const struct copy_spec gemini_copies[] = {
	{ "~/.gemini/settings.json", false, COPY_JSON_KEYS, gemini_settings_keys },
	{ "~/.gemini/extensions", true, COPY_KEEP_ASIDE, NULL },
};
static const struct profile gemini = {
	.name = "gemini",
	.title = "Gemini CLI",
	.programs = (const char *const[]){ "gemini", NULL },
	.path_marks = (const char *const[]){ "/@google/gemini-cli/", NULL },
	.state = (const char *const[]){ "~/.gemini", NULL },
	.copies = gemini_copies,
	.ncopies = NELEM(gemini_copies),
	.hosts = (const char *const[]){ "generativelanguage.googleapis.com:443",
					"cloudcode-pa.googleapis.com:443",
					"oauth2.googleapis.com:443", NULL },
	.keys = (const char *const[]){ "GEMINI_API_KEY", "GOOGLE_API_KEY", NULL },
	/* a Google login's OAuth tokens */
	.agent_only = (const char *const[]){ "~/.gemini/oauth_creds.json", NULL },
	.passthrough = (const char *const[]){ "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT",
					      "GEMINI_MODEL", NULL },
};

/*
 * aider (pip aider-chat): state in ~/.aider/ (caches, analytics id); its
 * ~/.aider.conf.yml can name lint and test commands (run later, outside:
 * kept aside).  It talks to whichever provider its model names.
 */
static const struct copy_spec aider_copies[] = {
	{ "~/.aider.conf.yml", false, COPY_KEEP_ASIDE, NULL },
	{ "~/.aider.model.settings.yml", false, COPY_KEEP_ASIDE, NULL },
};
static const struct profile aider = {
	.name = "aider",
	.title = "aider",
	.programs = (const char *const[]){ "aider", NULL },
	.path_marks = NULL,
	.state = (const char *const[]){ "~/.aider", NULL },
	.copies = aider_copies,
	.ncopies = NELEM(aider_copies),
	.hosts = (const char *const[]){ "api.openai.com:443", "api.anthropic.com:443",
					"generativelanguage.googleapis.com:443", NULL },
	.keys = (const char *const[]){ "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
				       "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", NULL },
	.passthrough = (const char *const[]){ "OPENAI_API_BASE", "OPENAI_BASE_URL",
					      "ANTHROPIC_BASE_URL", "AIDER_MODEL", NULL },
};

const struct profile *const profile_table[] = { &claude, &codex, &gemini, &aider, NULL };

/* ---- choosing ---------------------------------------------------------------------- */

const struct profile *profile_find(const char *name)
{
	for (size_t i = 0; name && profile_table[i]; i++)
		if (strcmp(profile_table[i]->name, name) == 0)
			return profile_table[i];
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* The profile naming path: its basename, or (resolved paths) a mark in it. */
static const struct profile *match_path(const char *path, bool marks)
{
	for (size_t i = 0; path && profile_table[i]; i++) {
		const struct profile *p = profile_table[i];
		if (in_list(p->programs, base_name(path)))
			return p;
		for (size_t k = 0; marks && p->path_marks && p->path_marks[k]; k++)
			if (strstr(path, p->path_marks[k]))
				return p;
	}
	return NULL;
}

/* Programs that run their first argument: the agent is that script. */
static bool is_interpreter(const char *path)
{
	static const char *const names[] = { "node", "nodejs", "bun", "deno", "python", "python3" };
	const char *b = base_name(path);
	for (size_t i = 0; i < NELEM(names); i++)
		if (strcmp(b, names[i]) == 0)
			return true;
	return strncmp(b, "python3.", 8) == 0;
}

const struct profile *profile_detect(const char *argv0, const char *program,
				     const char *resolved, char *const *argv)
{
	const struct profile *p = NULL;
	if (!(p = match_path(argv0, false)) && !(p = match_path(program, false)))
		p = match_path(resolved, true);
	if (p || !argv || !program || !is_interpreter(resolved ? resolved : program))
		return p;
	for (size_t i = 1; argv[i]; i++) {
		if (argv[i][0] == '-')
			continue;
		char *script = realpath(argv[i], NULL);
		if (!(p = match_path(argv[i], false)))
			p = match_path(script, true);
		free(script);
		break;
	}
	return p;
}

static void err_set(struct policy_error *err, const char *file, struct policy_pos pos,
		    const char *msg, const char *name)
{
	memset(err, 0, sizeof *err);
	snprintf(err->file, sizeof err->file, "%s", file);
	err->line = pos.line;
	err->column = pos.column;
	char known[128] = "";
	for (size_t i = 0; profile_table[i]; i++) {
		size_t n = strlen(known);
		snprintf(known + n, sizeof known - n, "%s, ", profile_table[i]->name);
	}
	snprintf(err->message, sizeof err->message, msg, name, known);
}

/* The agent's executables: program as run, its realpath, and the profile's helpers. */
static int agent_exes(struct profile_choice *c, const char *program)
{
	const size_t cap = 8;
	if (!(c->agent_exes = calloc(cap + 1, sizeof *c->agent_exes)))
		return -ENOMEM;
	char *resolved = program ? realpath(program, NULL) : NULL;
	if (program && !(c->agent_exes[c->nagent_exes++] = strdup(program))) {
		free(resolved);
		return -ENOMEM;
	}
	if (resolved && (!program || strcmp(resolved, program) != 0))
		c->agent_exes[c->nagent_exes++] = resolved;
	else
		free(resolved);
	c->first_helper = c->nagent_exes;
	if (c->profile->helpers && c->nagent_exes) {
		const char *r = c->agent_exes[c->nagent_exes - 1];
		c->nagent_exes += (size_t)c->profile->helpers(r, c->agent_exes + c->nagent_exes,
							      cap - c->nagent_exes);
	}
	return 0;
}

int profile_choose(const char *option, const struct policy *p, const char *program,
		   char *const *argv, struct profile_choice *c, struct policy_error *err)
{
	memset(c, 0, sizeof *c);
	const char *name = option ? option : p->profile;
	c->origin = option ? PROFILE_OPTION : p->profile ? PROFILE_POLICY : PROFILE_DETECTED;
	if (name && strcmp(name, "none") == 0) {
		c->origin = PROFILE_NONE;
		return 0;
	}
	if (name && strcmp(name, "auto") != 0) {
		if (!(c->profile = profile_find(name))) {
			if (option)
				err_set(err, "--profile", (struct policy_pos){ 0, 0 },
					"unknown profile '%s' (known: %snone, auto)", name);
			else
				err_set(err, p->source, p->profile_pos,
					"unknown profile '%s' (known: %snone, auto)", name);
			return -1;
		}
	} else {
		c->origin = PROFILE_DETECTED;
		char *resolved = program ? realpath(program, NULL) : NULL;
		c->profile = argv ? profile_detect(argv[0], program, resolved, argv) : NULL;
		free(resolved);
		if (!c->profile) {
			c->origin = PROFILE_NONE;
			return 0;
		}
	}
	if (agent_exes(c, program) < 0) {
		memset(err, 0, sizeof *err);
		snprintf(err->file, sizeof err->file, "%s", p->source);
		snprintf(err->message, sizeof err->message, "out of memory");
		return -1;
	}
	return 0;
}

void profile_choice_release(struct profile_choice *c)
{
	for (size_t i = 0; c->agent_exes && i < c->nagent_exes; i++)
		free(c->agent_exes[i]);
	free(c->agent_exes);
	memset(c, 0, sizeof *c);
}

void profile_describe(const struct profile_choice *c, char *buf, size_t cap)
{
	static const char *const how[] = {
		[PROFILE_NONE] = "none", [PROFILE_OPTION] = "chosen by --profile",
		[PROFILE_POLICY] = "named by the policy", [PROFILE_DETECTED] = "detected from the program",
	};
	if (!c->profile)
		snprintf(buf, cap, "none");
	else
		snprintf(buf, cap, "%s (%s, %s)", c->profile->name, c->profile->title, how[c->origin]);
}

/* ---- merging ----------------------------------------------------------------------- */

/* Appends one allow rule; its reason names the profile. */
static int add_rule(struct policy *p, const struct profile *pr, enum policy_rule_kind kind,
		    const char *pattern, unsigned actions, const char *why)
{
	char *reason = NULL;
	if (asprintf(&reason, "profile %s: %s %s", pr->name, pr->title, why) < 0)
		return -ENOMEM;
	int r = policy_rule_add(p, POLICY_LIST_ALLOW, kind,
				kind == POLICY_RULE_COMMAND ? POLICY_MATCH_EXACT : POLICY_MATCH_GLOB,
				pattern, actions, reason);
	free(reason);
	return r;
}

/* Appends s to a string list unless it is there already. */
static int add_string(char ***list, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i], s) == 0)
			return 0;
	char **grown = realloc(*list, (*n + 1) * sizeof **list);
	if (!grown)
		return -ENOMEM;
	*list = grown;
	if (!(grown[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int apply(const struct profile_choice *c, struct policy *p)
{
	const struct profile *pr = c->profile;
	struct policy_sandbox *sb = &p->sandbox;
	int r = 0;
	for (size_t i = 0; pr->state[i] && !r; i++) {
		r = add_rule(p, pr, POLICY_RULE_FILE, pr->state[i], POLICY_FILE_WRITE,
			     "keeps its state here");
		if (!r)
			r = add_string(&sb->write, &sb->nwrite, pr->state[i]);
	}
	for (size_t i = 0; pr->hosts[i] && !r; i++)
		r = add_rule(p, pr, POLICY_RULE_NETWORK, pr->hosts[i], 0, "talks to its model API");
	/* the helpers: the agent's executables past its program and its realpath */
	for (size_t i = c->first_helper; i < c->nagent_exes && !r; i++)
		r = add_rule(p, pr, POLICY_RULE_COMMAND, c->agent_exes[i], 0,
			     "starts its native binary");
	/* allowed (the policy's deny and ask still win) and named, so that the shim's refusal to
	   other processes is logged with this rule's reason */
	for (size_t i = 0; pr->agent_only && pr->agent_only[i] && !r; i++)
		r = add_rule(p, pr, POLICY_RULE_FILE, pr->agent_only[i], POLICY_FILE_READ,
			     "signs in with it: the agent's own processes only");
	for (size_t i = 0; pr->keys[i] && !r; i++)
		r = add_string(&sb->env_passthrough, &sb->nenv_passthrough, pr->keys[i]);
	for (size_t i = 0; pr->passthrough[i] && !r; i++)
		r = add_string(&sb->env_passthrough, &sb->nenv_passthrough, pr->passthrough[i]);
	return r;
}

int profile_apply(const struct profile_choice *c, struct policy *p, struct policy_error *err)
{
	if (!c->profile)
		return 0;
	int r = apply(c, p);
	if (r < 0) {
		memset(err, 0, sizeof *err);
		snprintf(err->file, sizeof err->file, "%s", p->source);
		snprintf(err->message, sizeof err->message, "profile %s: out of memory",
			 c->profile->name);
	}
	return r;
}

int profile_write_mark(const struct profile_choice *c, const char *home, const char *path)
{
	if (!c->profile)
		return 0;
	FILE *f = NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	/* every known agent's own files, not only this one's: a Claude Code session's tools have
	   no more business with ~/.codex/auth.json than with ~/.claude/.credentials.json */
	for (size_t t = 0; profile_table[t]; t++) {
		const struct profile *pr = profile_table[t];
		for (size_t i = 0; pr->agent_only && pr->agent_only[i]; i++) {
			const char *p = pr->agent_only[i];
			char full[PATH_MAX], real[PATH_MAX];
			if (strncmp(p, "~/", 2) != 0 || !home ||
			    (size_t)snprintf(full, sizeof full, "%s/%s", home, p + 2) >= sizeof full)
				continue;
			fprintf(f, "%s\n", full);
			if (realpath(full, real) && strcmp(real, full) != 0)
				fprintf(f, "%s\n", real);
		}
	}
	return fclose(f) == 0 ? 0 : -errno;
}

/* "NAME=a:b:c" of the strings in list (n of them, or NULL-terminated when n is SIZE_MAX). */
static char *join_var(const char *name, const char *const *list, size_t n)
{
	size_t len = strlen(name) + 2;
	for (size_t i = 0; i < n && list[i]; i++)
		len += strlen(list[i]) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	size_t at = (size_t)snprintf(s, len, "%s=", name);
	for (size_t i = 0; i < n && list[i]; i++) {
		if (strchr(list[i], ':'))
			continue;
		at += (size_t)snprintf(s + at, len - at, "%s%s", at > strlen(name) + 1 ? ":" : "",
				       list[i]);
	}
	return s;
}

int profile_scrub_env(const struct profile_choice *c, char **keys, char **exes)
{
	*keys = *exes = NULL;
	if (!c->profile || !c->profile->keys[0])
		return 0;
	*keys = join_var("AIRLOCK_AGENT_KEYS", c->profile->keys, SIZE_MAX);
	*exes = join_var("AIRLOCK_AGENT_EXE", (const char *const *)c->agent_exes, c->nagent_exes);
	if (*keys && *exes)
		return 0;
	free(*keys);
	free(*exes);
	*keys = *exes = NULL;
	return -ENOMEM;
}

int profile_mkdirs(const char *path, char *failed, size_t cap)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		snprintf(failed, cap, "%s", path);
		return -ENAMETOOLONG;
	}
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		struct stat st;
		if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
			int e = errno;
			snprintf(failed, cap, "%s", buf);
			return -e;
		}
		if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
			snprintf(failed, cap, "%s", buf);
			return -ENOTDIR;
		}
		if (!c)
			return 0;
		*s = c;
	}
}
