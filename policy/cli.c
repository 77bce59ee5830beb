/* cli.c — the table of command-line tools and their global options, and the normalizer that removes them before a subcommand (see cli.h). */
#include <string.h>

#include "policy/cli.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Shorthands for the value forms, per parser family. */
#define FLAG CLI_BARE
#define LONGV (CLI_SEP | CLI_EQ)           /* "--opt v", "--opt=v" */
#define SHORTV (CLI_SEP | CLI_ATT)         /* "-o v", "-ov" */
#define PFLAG_BOOL (CLI_BARE | CLI_EQ)     /* pflag: "--tls", "--tls=false" (never "--tls false") */
#define PFLAG_SHORTV (CLI_SEP | CLI_EQ | CLI_ATT) /* pflag: "-n ns", "-n=ns", "-nns" */

/*
 * git(1) OPTIONS (git 2.39's man page, and git.c's handle_options for the
 * later --no-lazy-fetch, --no-advice and --attr-source).  -C and -c take
 * the next word only ("-C/tmp" is "unknown option"); --git-dir,
 * --work-tree, --namespace, --super-prefix, --config-env and --attr-source
 * take the next word or "=value".  Left out because they end git's work
 * with no subcommand: -h/--help, -v/--version, --html-path, --man-path,
 * --info-path, a bare --exec-path, --list-cmds=.
 */
static const struct cli_option git_options[] = {
	{ "--attr-source", LONGV },
	{ "--bare", FLAG },
	{ "--config-env", LONGV },
	{ "--exec-path", CLI_EQ },
	{ "--git-dir", LONGV },
	{ "--glob-pathspecs", FLAG },
	{ "--icase-pathspecs", FLAG },
	{ "--literal-pathspecs", FLAG },
	{ "--namespace", LONGV },
	{ "--no-advice", FLAG },
	{ "--no-lazy-fetch", FLAG },
	{ "--no-optional-locks", FLAG },
	{ "--no-pager", FLAG },
	{ "--no-replace-objects", FLAG },
	{ "--noglob-pathspecs", FLAG },
	{ "--paginate", FLAG },
	{ "--super-prefix", LONGV },
	{ "--work-tree", LONGV },
	{ "-C", CLI_SEP },
	{ "-P", FLAG },
	{ "-c", CLI_SEP },
	{ "-p", FLAG },
};

/*
 * npm: `npm help config` "Shorthands and Other CLI Niceties" and the
 * config definitions of npm 11 (@npmcli/config/lib/definitions: which
 * configs are Boolean, which take a value, their one-letter forms).  npm
 * reads any config anywhere; these are the ones seen before a command.
 * --color is Boolean-or-"always": a bare --color may take the next word,
 * so only "--color=..." is listed.  -h, -v, --help, --usage, --version end
 * npm's work and are left out.
 */
static const struct cli_option npm_options[] = {
	{ "--all", FLAG },
	{ "--audit", FLAG },
	{ "--before", LONGV },
	{ "--cache", LONGV },
	{ "--call", LONGV },
	{ "--color", CLI_EQ },
	{ "--dd", FLAG },
	{ "--ddd", FLAG },
	{ "--dry-run", FLAG },
	{ "--force", FLAG },
	{ "--foreground-scripts", FLAG },
	{ "--fund", FLAG },
	{ "--global", FLAG },
	{ "--globalconfig", LONGV },
	{ "--ignore-scripts", FLAG },
	{ "--include", LONGV },
	{ "--include-workspace-root", FLAG },
	{ "--iwr", FLAG },
	{ "--json", FLAG },
	{ "--legacy-peer-deps", FLAG },
	{ "--local", FLAG },
	{ "--location", LONGV },
	{ "--loglevel", LONGV },
	{ "--long", FLAG },
	{ "--no", FLAG },
	{ "--offline", FLAG },
	{ "--omit", LONGV },
	{ "--package-lock", FLAG },
	{ "--parseable", FLAG },
	{ "--porcelain", FLAG },
	{ "--prefer-offline", FLAG },
	{ "--prefer-online", FLAG },
	{ "--prefix", LONGV },
	{ "--progress", FLAG },
	{ "--quiet", FLAG },
	{ "--reg", LONGV },
	{ "--registry", LONGV },
	{ "--save", FLAG },
	{ "--save-bundle", FLAG },
	{ "--save-dev", FLAG },
	{ "--save-exact", FLAG },
	{ "--save-optional", FLAG },
	{ "--save-peer", FLAG },
	{ "--save-prod", FLAG },
	{ "--script-shell", LONGV },
	{ "--silent", FLAG },
	{ "--strict-peer-deps", FLAG },
	{ "--userconfig", LONGV },
	{ "--verbose", FLAG },
	{ "--workspace", LONGV },
	{ "--workspaces", FLAG },
	{ "--ws", FLAG },
	{ "--yes", FLAG },
	{ "-B", FLAG },
	{ "-C", CLI_SEP },
	{ "-D", FLAG },
	{ "-E", FLAG },
	{ "-L", CLI_SEP },
	{ "-O", FLAG },
	{ "-P", FLAG },
	{ "-S", FLAG },
	{ "-a", FLAG },
	{ "-c", CLI_SEP },
	{ "-d", FLAG },
	{ "-dd", FLAG },
	{ "-ddd", FLAG },
	{ "-f", FLAG },
	{ "-g", FLAG },
	{ "-l", FLAG },
	{ "-n", FLAG },
	{ "-p", FLAG },
	{ "-q", FLAG },
	{ "-s", FLAG },
	{ "-w", CLI_SEP },
	{ "-y", FLAG },
};

/*
 * npx (npm 11's bin/npx-cli.js): the options it reads itself before the
 * package to run; the package is the "subcommand".
 */
static const struct cli_option npx_options[] = {
	{ "--cache", LONGV },
	{ "--call", LONGV },
	{ "--no-install", FLAG },
	{ "--package", LONGV },
	{ "--quiet", FLAG },
	{ "--shell", LONGV },
	{ "--userconfig", LONGV },
	{ "--yes", FLAG },
	{ "-c", CLI_SEP },
	{ "-p", CLI_SEP },
	{ "-q", FLAG },
	{ "-y", FLAG },
};

/* pnpm: pnpm.io "pnpm CLI" options (-C/--dir, -w, -r, --filter) and its logging options. */
static const struct cli_option pnpm_options[] = {
	{ "--aggregate-output", FLAG },
	{ "--color", FLAG },
	{ "--dir", LONGV },
	{ "--filter", LONGV },
	{ "--loglevel", LONGV },
	{ "--recursive", FLAG },
	{ "--reporter", LONGV },
	{ "--silent", FLAG },
	{ "--stream", FLAG },
	{ "--workspace-root", FLAG },
	{ "-C", CLI_SEP },
	{ "-F", CLI_SEP },
	{ "-r", FLAG },
	{ "-s", FLAG },
	{ "-w", FLAG },
};

/* yarn 1: classic.yarnpkg.com "yarn <command> [flags]", the global flags of `yarn help`. */
static const struct cli_option yarn_options[] = {
	{ "--cache-folder", LONGV },
	{ "--cwd", LONGV },
	{ "--modules-folder", LONGV },
	{ "--mutex", LONGV },
	{ "--no-progress", FLAG },
	{ "--non-interactive", FLAG },
	{ "--offline", FLAG },
	{ "--prefer-offline", FLAG },
	{ "--silent", FLAG },
	{ "--verbose", FLAG },
};

/*
 * pip: `pip --help` "General Options" (pip 23; optparse: "--opt v",
 * "--opt=v", "-ov", one-letter options combine).  --log's aliases
 * --log-file and --local-log are pip's cmdoptions.  -h/--help and
 * -V/--version end pip's work and are left out.
 */
static const struct cli_option pip_options[] = {
	{ "--cache-dir", LONGV },
	{ "--cert", LONGV },
	{ "--client-cert", LONGV },
	{ "--debug", FLAG },
	{ "--disable-pip-version-check", FLAG },
	{ "--exists-action", LONGV },
	{ "--isolated", FLAG },
	{ "--keyring-provider", LONGV },
	{ "--local-log", LONGV },
	{ "--log", LONGV },
	{ "--log-file", LONGV },
	{ "--no-cache-dir", FLAG },
	{ "--no-color", FLAG },
	{ "--no-input", FLAG },
	{ "--no-python-version-warning", FLAG },
	{ "--proxy", LONGV },
	{ "--python", LONGV },
	{ "--quiet", FLAG },
	{ "--require-virtualenv", FLAG },
	{ "--resume-retries", LONGV },
	{ "--retries", LONGV },
	{ "--timeout", LONGV },
	{ "--trusted-host", LONGV },
	{ "--use-deprecated", LONGV },
	{ "--use-feature", LONGV },
	{ "--verbose", FLAG },
	{ "-q", FLAG },
	{ "-v", FLAG },
};

/*
 * python(1) "COMMAND LINE OPTIONS" (CPython 3.x; its own getopt: one-letter
 * options combine, -W/-X/-c/-m take the rest of the word or the next one;
 * --check-hash-based-pycs takes the next word only).  -c ends the options
 * (what follows is the command's); -m names the module that runs the rest.
 * -h, -?, -V and the --help* and --version options end python's work.
 */
static const struct cli_option python_options[] = {
	{ "--check-hash-based-pycs", CLI_SEP },
	{ "-B", FLAG },
	{ "-E", FLAG },
	{ "-I", FLAG },
	{ "-O", FLAG },
	{ "-P", FLAG },
	{ "-R", FLAG },
	{ "-S", FLAG },
	{ "-W", SHORTV },
	{ "-X", SHORTV },
	{ "-b", FLAG },
	{ "-c", SHORTV | CLI_ENDS },
	{ "-d", FLAG },
	{ "-i", FLAG },
	{ "-m", SHORTV | CLI_MODULE },
	{ "-q", FLAG },
	{ "-s", FLAG },
	{ "-u", FLAG },
	{ "-v", FLAG },
	{ "-x", FLAG },
};

/*
 * cargo: `cargo --help` (cargo [+toolchain] [OPTIONS] [COMMAND]; clap:
 * "--opt v", "--opt=v", "-Cdir", one-letter flags combine as in -vv).
 * -V/--version, --list, --explain and -h/--help end cargo's work.
 */
static const struct cli_option cargo_options[] = {
	{ "--color", LONGV },
	{ "--config", LONGV },
	{ "--frozen", FLAG },
	{ "--locked", FLAG },
	{ "--offline", FLAG },
	{ "--quiet", FLAG },
	{ "--verbose", FLAG },
	{ "-C", SHORTV },
	{ "-Z", SHORTV },
	{ "-q", FLAG },
	{ "-v", FLAG },
};

/*
 * docker: `docker --help` "Global Options" (Docker CLI, cobra/pflag).
 * -v/--version and -h/--help end docker's work.
 */
static const struct cli_option docker_options[] = {
	{ "--config", LONGV },
	{ "--context", LONGV },
	{ "--debug", PFLAG_BOOL },
	{ "--host", LONGV },
	{ "--log-level", LONGV },
	{ "--tls", PFLAG_BOOL },
	{ "--tlscacert", LONGV },
	{ "--tlscert", LONGV },
	{ "--tlskey", LONGV },
	{ "--tlsverify", PFLAG_BOOL },
	{ "-D", FLAG },
	{ "-H", PFLAG_SHORTV },
	{ "-c", PFLAG_SHORTV },
	{ "-l", PFLAG_SHORTV },
};

/* kubectl: `kubectl options` (the flags every command takes; cobra/pflag). */
static const struct cli_option kubectl_options[] = {
	{ "--as", LONGV },
	{ "--as-group", LONGV },
	{ "--as-uid", LONGV },
	{ "--cache-dir", LONGV },
	{ "--certificate-authority", LONGV },
	{ "--client-certificate", LONGV },
	{ "--client-key", LONGV },
	{ "--cluster", LONGV },
	{ "--context", LONGV },
	{ "--disable-compression", PFLAG_BOOL },
	{ "--insecure-skip-tls-verify", PFLAG_BOOL },
	{ "--kubeconfig", LONGV },
	{ "--log-flush-frequency", LONGV },
	{ "--match-server-version", PFLAG_BOOL },
	{ "--namespace", LONGV },
	{ "--password", LONGV },
	{ "--profile", LONGV },
	{ "--profile-output", LONGV },
	{ "--request-timeout", LONGV },
	{ "--server", LONGV },
	{ "--tls-server-name", LONGV },
	{ "--token", LONGV },
	{ "--user", LONGV },
	{ "--username", LONGV },
	{ "--v", LONGV },
	{ "--vmodule", LONGV },
	{ "--warnings-as-errors", PFLAG_BOOL },
	{ "-n", PFLAG_SHORTV },
	{ "-s", PFLAG_SHORTV },
	{ "-v", PFLAG_SHORTV },
};

/*
 * uv: `uv --help` "Global options" (clap).  -h/--help and -V/--version end
 * uv's work.
 */
static const struct cli_option uv_options[] = {
	{ "--allow-insecure-host", LONGV },
	{ "--cache-dir", LONGV },
	{ "--color", LONGV },
	{ "--config-file", LONGV },
	{ "--directory", LONGV },
	{ "--managed-python", FLAG },
	{ "--native-tls", FLAG },
	{ "--no-cache", FLAG },
	{ "--no-config", FLAG },
	{ "--no-managed-python", FLAG },
	{ "--no-progress", FLAG },
	{ "--no-python-downloads", FLAG },
	{ "--offline", FLAG },
	{ "--project", LONGV },
	{ "--python-preference", LONGV },
	{ "--quiet", FLAG },
	{ "--verbose", FLAG },
	{ "-n", FLAG },
	{ "-q", FLAG },
	{ "-v", FLAG },
};

/*
 * poetry: python-poetry.org "Global options" (cleo).  -h/--help and
 * -V/--version end poetry's work.
 */
static const struct cli_option poetry_options[] = {
	{ "--ansi", FLAG },
	{ "--directory", LONGV },
	{ "--no-ansi", FLAG },
	{ "--no-cache", FLAG },
	{ "--no-interaction", FLAG },
	{ "--no-plugins", FLAG },
	{ "--project", LONGV },
	{ "--quiet", FLAG },
	{ "--verbose", FLAG },
	{ "-C", CLI_SEP },
	{ "-P", CLI_SEP },
	{ "-n", FLAG },
	{ "-q", FLAG },
	{ "-v", FLAG },
	{ "-vv", FLAG },
	{ "-vvv", FLAG },
};

#define OPTS(a) a, N(a)

/*
 * Sorted by name.  go and gh are listed with no options, as checked: go's
 * -C must follow the command name (cmd/go's handleChdirFlag: "go build -C
 * dir"), gh's only flags before a command are --help and --version.
 */
const struct cli_program cli_programs[] = {
	{ { "cargo" }, CLI_P_PLUS | CLI_P_CLUSTER, OPTS(cargo_options), "cargo --help" },
	{ { "docker" }, CLI_P_CLUSTER, OPTS(docker_options), "docker --help, Global Options" },
	{ { "gh" }, 0, NULL, 0, "gh help: no global options but --help, --version" },
	{ { "git" }, 0, OPTS(git_options), "git(1) OPTIONS" },
	{ { "go" }, 0, NULL, 0, "go help: -C follows the command" },
	{ { "kubectl" }, CLI_P_CLUSTER, OPTS(kubectl_options), "kubectl options" },
	{ { "npm" }, CLI_P_NOPT, OPTS(npm_options), "npm help config, Shorthands" },
	{ { "npx" }, CLI_P_NOPT, OPTS(npx_options), "npm bin/npx-cli.js" },
	{ { "pip" }, CLI_P_VERSIONED | CLI_P_CLUSTER, OPTS(pip_options), "pip --help, General Options" },
	{ { "pnpm" }, CLI_P_NOPT, OPTS(pnpm_options), "pnpm.io, pnpm CLI options" },
	{ { "poetry" }, 0, OPTS(poetry_options), "python-poetry.org, Global options" },
	{ { "python", "pypy" }, CLI_P_VERSIONED | CLI_P_CLUSTER, OPTS(python_options),
	  "python(1) COMMAND LINE OPTIONS" },
	{ { "uv" }, CLI_P_CLUSTER, OPTS(uv_options), "uv --help, Global options" },
	{ { "yarn" }, 0, OPTS(yarn_options), "yarn help (yarn 1)" },
};
const size_t cli_nprograms = N(cli_programs);

/* ---- lookup ------------------------------------------------------------------- */

/* Whether base (len bytes) is name, or name and a version ("3", "3.11") when versioned. */
static bool name_is(const char *name, const char *base, size_t len, bool versioned)
{
	size_t n = 0;
	while (name[n] && n < len && name[n] == base[n]) /* strlen(3) and memcmp(3) in one pass */
		n++;
	if (name[n])
		return false;
	if (len == n)
		return true;
	if (!versioned || base[n] < '0' || base[n] > '9')
		return false;
	for (size_t i = n; i < len; i++)
		if ((base[i] < '0' || base[i] > '9') && base[i] != '.')
			return false;
	return true;
}

/*
 * The first letters of the table's names: most programs started are not in
 * the table, and are told so here.  test_cli checks that cli_find() finds
 * every name, so a letter missing here fails it.
 */
static const char first_letters[] = "cdgknpuy";

const struct cli_program *cli_find(const char *base, size_t base_len)
{
	if (base_len == 0 || !memchr(first_letters, base[0], sizeof first_letters - 1))
		return NULL;
	for (size_t i = 0; i < cli_nprograms; i++) {
		const struct cli_program *p = &cli_programs[i];
		for (size_t k = 0; k < CLI_MAX_NAMES && p->names[k]; k++)
			if (p->names[k][0] == base[0] &&
			    name_is(p->names[k], base, base_len, p->flags & CLI_P_VERSIONED))
				return p;
	}
	return NULL;
}

/* The option named s (len bytes), by binary search of the sorted list, or NULL. */
static const struct cli_option *option(const struct cli_program *p, const char *s, size_t len)
{
	size_t lo = 0, hi = p->noptions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *name = p->options[mid].name;
		int c = strncmp(name, s, len);
		if (c == 0)
			c = name[len] == '\0' ? 0 : 1;
		if (c == 0)
			return &p->options[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- the words ------------------------------------------------------------------ */

/* The arguments, one word at a time: from an argv, or from a joined string split at spaces. */
struct cursor {
	const char *const *argv; /* argv mode when non-NULL */
	const char *joined;      /* joined mode: len bytes */
	size_t len;
	size_t idx;    /* argv index of the current word (the first argument is 1) */
	size_t off;    /* its byte offset in the joined form */
	const char *w; /* the current word, NULL past the end */
	size_t wlen;
};

static void load(struct cursor *c)
{
	if (c->argv) {
		c->w = c->argv[c->idx];
		c->wlen = c->w ? strlen(c->w) : 0;
		return;
	}
	if (c->len == 0 || c->off > c->len) {
		c->w = NULL;
		c->wlen = 0;
		return;
	}
	c->w = c->joined + c->off;
	const char *sp = memchr(c->w, ' ', c->len - c->off);
	c->wlen = sp ? (size_t)(sp - c->w) : c->len - c->off;
}

static void next(struct cursor *c)
{
	if (!c->w)
		return;
	c->off += c->wlen + 1;
	c->idx++;
	load(c);
}

/* ---- one program's options ---------------------------------------------------------- */

enum step { STEP_STOP, STEP_SUB, STEP_MODULE };

/* A module name python would import: dotted ASCII identifiers, nothing that reads as a path. */
static bool module_name(const char *s, size_t len)
{
	if (len == 0 || s[0] == '.' || s[len - 1] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!(ch == '_' || ch == '.' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= 'A' && ch <= 'Z')))
			return false;
	}
	return true;
}

/*
 * The value of option o given in the current word (rest, rlen: after '=' or
 * the attached letters; NULL when the word holds none) or in the next one.
 * Leaves the cursor on the last word the option used.  Returns false when
 * the option cannot take its value this way.
 */
static bool take_value(const struct cli_option *o, struct cursor *c, const char *rest, size_t rlen,
		       unsigned form, const char **val, size_t *vlen)
{
	if (rest) {
		if (!(o->how & form))
			return false;
		*val = rest;
		*vlen = rlen;
		return true;
	}
	if (o->how & CLI_SEP) {
		next(c);
		if (!c->w)
			return false;
		*val = c->w;
		*vlen = c->wlen;
		return true;
	}
	*val = NULL;
	*vlen = 0;
	return (o->how & CLI_BARE) != 0;
}

/* What a bare flag's word leaves: npm's parser takes a following "true" or "false" as its value. */
static bool flag_ok(const struct cli_program *p, const struct cursor *c)
{
	if (!(p->flags & CLI_P_NOPT))
		return true;
	struct cursor la = *c;
	next(&la);
	return !(la.w && ((la.wlen == 4 && memcmp(la.w, "true", 4) == 0) ||
			  (la.wlen == 5 && memcmp(la.w, "false", 5) == 0)));
}

/* After an option that took (val, vlen): the step it ends, or -1 to read on. */
static int after_option(const struct cli_program *p, const struct cli_option *o,
			const struct cursor *c, const char *val, size_t vlen, const char **mod,
			size_t *modlen)
{
	if (o->how & CLI_MODULE) {
		if (!val || !module_name(val, vlen))
			return STEP_STOP;
		*mod = val;
		*modlen = vlen;
		return STEP_MODULE;
	}
	if (!val && !flag_ok(p, c))
		return STEP_STOP;
	return -1;
}

/* A word of one-letter options ("-q", "-vq", "-um", "-mpip", "-n=ns"). */
static int short_word(const struct cli_program *p, struct cursor *c, const char **mod,
		      size_t *modlen)
{
	const char *w = c->w;
	size_t wlen = c->wlen;
	for (size_t i = 1; i < wlen; i++) {
		const struct cli_option *o = option(p, (const char[]){ '-', w[i] }, 2);
		if (!o || (i > 1 && !(p->flags & CLI_P_CLUSTER)))
			return STEP_STOP;
		if (o->how & CLI_ENDS) /* only as the word's first letter: "-c" keeps its word */
			return i == 1 ? STEP_SUB : STEP_STOP;
		if (o->how == CLI_BARE) {
			if (i + 1 == wlen)
				return after_option(p, o, c, NULL, 0, mod, modlen);
			continue;
		}
		/* a value-taking letter: the rest of the word, "=value", or the next word */
		const char *val, *rest = NULL;
		size_t vlen, rlen = 0;
		unsigned form = CLI_ATT;
		if (i + 1 < wlen) {
			rest = w + i + 1;
			rlen = wlen - i - 1;
			if (rest[0] == '=' && (o->how & CLI_EQ)) {
				rest++;
				rlen--;
				form = CLI_EQ;
			}
		}
		if (!take_value(o, c, rest, rlen, form, &val, &vlen))
			return STEP_STOP;
		return after_option(p, o, c, val, vlen, mod, modlen);
	}
	return STEP_STOP; /* "-" alone never gets here */
}

/* A long option word ("--no-pager", "--git-dir=x", "--prefix x", or npm's "-dd"). */
static int long_word(const struct cli_program *p, struct cursor *c, size_t nlen, const char **mod,
		     size_t *modlen)
{
	const char *w = c->w;
	bool eq = nlen < c->wlen;
	const struct cli_option *o = option(p, w, nlen);
	if (!o && (p->flags & CLI_P_NOPT) && !eq && nlen > 5 && memcmp(w, "--no-", 5) == 0) {
		/* nopt: "--no-audit" is the flag --audit, negated */
		char name[64];
		if (nlen - 3 < sizeof name) {
			name[0] = name[1] = '-';
			memcpy(name + 2, w + 5, nlen - 5);
			o = option(p, name, nlen - 3);
			if (o && o->how != CLI_BARE)
				o = NULL;
		}
	}
	if (!o)
		return STEP_STOP;
	if (o->how & CLI_ENDS)
		return eq ? STEP_STOP : STEP_SUB;
	const char *val;
	size_t vlen;
	if (!take_value(o, c, eq ? w + nlen + 1 : NULL, eq ? c->wlen - nlen - 1 : 0, CLI_EQ, &val,
			&vlen))
		return STEP_STOP;
	return after_option(p, o, c, val, vlen, mod, modlen);
}

/*
 * Reads p's options from the cursor on: STEP_SUB with the cursor on the
 * subcommand, STEP_MODULE with the module in *mod and the cursor on the
 * word after it, or STEP_STOP.
 */
static enum step read_options(const struct cli_program *p, struct cursor *c, bool first,
			      const char **mod, size_t *modlen)
{
	for (size_t n = 0; c->w; n++, first = false) {
		if (n >= CLI_MAX_WORDS)
			return STEP_STOP;
		const char *w = c->w;
		size_t wlen = c->wlen;
		if (first && (p->flags & CLI_P_PLUS) && wlen > 1 && w[0] == '+') {
			next(c);
			continue;
		}
		if (wlen < 2 || w[0] != '-')
			return STEP_SUB; /* the subcommand ("-" too: python's stdin) */
		if (wlen == 2 && w[1] == '-')
			return STEP_STOP;
		const char *eq = memchr(w, '=', wlen);
		size_t nlen = eq ? (size_t)(eq - w) : wlen;
		/* "--long", or a one-dash name listed whole (npm's "-dd", poetry's "-vv") */
		int r = w[1] == '-' || (nlen > 2 && option(p, w, nlen))
				? long_word(p, c, nlen, mod, modlen)
				: short_word(p, c, mod, modlen);
		if (r == STEP_MODULE)
			next(c);
		if (r >= 0)
			return (enum step)r;
		next(c);
	}
	return STEP_STOP; /* no subcommand */
}

/* ---- normalizing --------------------------------------------------------------------- */

static bool normalize(const char *base, size_t base_len, struct cursor *c, struct cli_norm *out)
{
	const struct cli_program *p = cli_find(base, base_len);
	struct cli_norm n = { .program = base, .program_len = base_len };
	bool found = false;
	if (!p || p->noptions == 0)
		return false;
	load(c);
	/* each step reads one program's options: a module runner's module is the next program */
	for (int step = 0; p && p->noptions && step < CLI_MAX_STEPS; step++) {
		const char *mod;
		size_t modlen, idx = c->idx;
		enum step r = read_options(p, c, step == 0, &mod, &modlen);
		if (r == STEP_SUB && c->idx != idx) {
			n.start = c->idx;
			n.offset = c->off;
			found = true;
		}
		if (r != STEP_MODULE)
			break;
		n = (struct cli_norm){ .program = mod, .program_len = modlen, .module = true,
				       .start = c->idx, .offset = c->off };
		found = true;
		p = cli_find(mod, modlen);
	}
	if (found)
		*out = n;
	return found;
}

bool cli_normalize(const char *base, size_t base_len, const char *const *argv,
		   struct cli_norm *out)
{
	static const char *const empty[] = { "", NULL };
	struct cursor c = { .argv = argv && argv[0] ? argv : empty, .idx = 1 };
	return normalize(base, base_len, &c, out);
}

bool cli_normalize_joined(const char *base, size_t base_len, const char *args, size_t args_len,
			  struct cli_norm *out)
{
	struct cursor c = { .joined = args ? args : "", .len = args ? args_len : 0, .idx = 1 };
	return normalize(base, base_len, &c, out);
}
