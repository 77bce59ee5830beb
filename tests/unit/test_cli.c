/* test_cli.c — policy/cli.c: the table of CLIs and their global options, the normalizer (argv and joined), and exec decisions on both forms of a command through compiled policies. */
#include "testutil.h"

#include <stdbool.h>

#include "policy/cli.h"

#define MAXW 16

/* ---- the table's invariants ---------------------------------------------------------- */

static bool lower_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* "--name" of [a-z0-9-] not ending in '-', "-X" of one letter or digit, or "-XX.." repeating a listed "-X". */
static void check_option_name(const struct cli_program *p, const char *name)
{
	size_t n = strlen(name);
	if (n > 2 && name[0] == '-' && name[1] == '-') {
		assert_true(lower_name(name + 2));
		assert_true(name[n - 1] != '-' && name[2] != '-');
		return;
	}
	assert_true(n >= 2 && name[0] == '-');
	for (size_t i = 1; i < n; i++) {
		char c = name[i];
		assert_true((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
		assert_int_equal(c, name[1]);
	}
	if (n > 2) { /* npm's "-dd", poetry's "-vv": the letter itself is listed, as a flag */
		bool found = false;
		for (size_t k = 0; k < p->noptions; k++)
			found |= strlen(p->options[k].name) == 2 && p->options[k].name[1] == name[1];
		assert_true(found);
	}
}

static void check_option_how(const char *name, unsigned how)
{
	const unsigned known = CLI_BARE | CLI_SEP | CLI_EQ | CLI_ATT | CLI_MODULE | CLI_ENDS;
	bool one_letter = strlen(name) == 2;
	assert_int_equal(how & ~known, 0);
	assert_true(how & (CLI_BARE | CLI_SEP | CLI_EQ | CLI_ATT)); /* some way to use it */
	/* a flag that may take the next word would make its next word ambiguous */
	assert_false((how & CLI_BARE) && (how & CLI_SEP));
	if (how & CLI_ATT)
		assert_true(one_letter);
	if (how & (CLI_MODULE | CLI_ENDS)) { /* a value, given the ways python takes it */
		assert_true(how & CLI_SEP);
		assert_false(how & CLI_BARE);
		assert_false((how & CLI_MODULE) && (how & CLI_ENDS));
	}
}

static void test_table(void **state)
{
	(void)state;
	assert_true(cli_nprograms >= 14);
	for (size_t i = 0; i < cli_nprograms; i++) {
		const struct cli_program *p = &cli_programs[i];
		assert_non_null(p->names[0]);
		assert_non_null(p->source);
		assert_true(p->source[0] != '\0');
		assert_int_equal(p->options == NULL, p->noptions == 0);
		if (i)
			assert_true(strcmp(cli_programs[i - 1].names[0], p->names[0]) < 0);
		for (size_t k = 0; k < CLI_MAX_NAMES && p->names[k]; k++) {
			assert_true(lower_name(p->names[k]));
			/* every name is this row's, and no other row's */
			assert_ptr_equal(cli_find(p->names[k], strlen(p->names[k])), p);
			for (size_t j = 0; j < cli_nprograms; j++)
				for (size_t m = 0; j != i && m < CLI_MAX_NAMES && cli_programs[j].names[m];
				     m++)
					assert_string_not_equal(cli_programs[j].names[m], p->names[k]);
		}
		for (size_t k = 0; k < p->noptions; k++) {
			const struct cli_option *o = &p->options[k];
			check_option_name(p, o->name);
			check_option_how(o->name, o->how);
			/* sorted and unique: the binary search relies on it */
			if (k)
				assert_true(strcmp(p->options[k - 1].name, o->name) < 0);
			if (o->how & CLI_MODULE)
				assert_true(p->flags & CLI_P_CLUSTER);
		}
	}
	/* versions only where the table says */
	assert_non_null(cli_find("python3.11", 10));
	assert_non_null(cli_find("pip3", 4));
	assert_null(cli_find("python3x", 8));
	assert_null(cli_find("gitx", 4));
	assert_null(cli_find("git3", 4));
	assert_null(cli_find("pythonx", 7));
	assert_null(cli_find("", 0));
}

/* ---- normalization --------------------------------------------------------------------- */

struct ncase {
	const char *words[MAXW]; /* argv, [0] the program's basename */
	const char *program;     /* NULL: no normal form */
	int start;
	int line;
};

#define C(prog, start, ...) { { __VA_ARGS__, NULL }, prog, start, __LINE__ }

static const struct ncase cases[] = {
	/* git: git(1) OPTIONS */
	C("git", 5, "git", "-c", "a=b", "-C", "dir", "commit", "-m", "x"),
	C("git", 5, "git", "--no-pager", "--git-dir=/r/.git", "--work-tree", "/r", "status"),
	C("git", 2, "git", "--no-optional-locks", "status"),
	C("git", 3, "git", "--config-env", "x=Y", "log"),
	C("git", 2, "git", "--exec-path=/x", "log"),
	C(NULL, 0, "git", "commit", "-m", "x"),        /* nothing to remove */
	C(NULL, 0, "git", "-C/tmp", "status"),         /* git reads -C's value apart only */
	C(NULL, 0, "git", "--exec-path", "status"),    /* bare --exec-path prints and exits */
	C(NULL, 0, "git", "--frobnicate", "status"),   /* unknown: never guess */
	C(NULL, 0, "git", "-c", "a=b"),                /* no subcommand */
	C(NULL, 0, "git", "-c"),                       /* a value missing */
	C(NULL, 0, "git", "--no-pager"),
	C(NULL, 0, "git"),
	C(NULL, 0, "git", "--", "status"),             /* "--" stops */
	C(NULL, 0, "git", "--no-pager=1", "status"),   /* a flag given a value */
	C(NULL, 0, "git", "--version", "status"),
	C(NULL, 0, "git", "-pP", "status"),            /* git does not combine letters */
	/* npm: shorthands, "=" forms, nopt's negations and true/false */
	C("npm", 3, "npm", "--prefix", "x", "install"),
	C("npm", 2, "npm", "--prefix=x", "install", "y"),
	C("npm", 3, "npm", "-C", "x", "install"),
	C("npm", 3, "npm", "-g", "--no-audit", "install", "x"),
	C("npm", 2, "npm", "-ddd", "ci"),
	C("npm", 2, "npm", "--color=always", "test"),
	C(NULL, 0, "npm", "--color", "always", "test"),
	C(NULL, 0, "npm", "-g", "false", "install"),
	C(NULL, 0, "npm", "--no-prefix", "install"),   /* only flags negate */
	C(NULL, 0, "npm", "-v", "install"),
	C("npx", 2, "npx", "--yes", "cowsay", "hi"),
	C("npx", 3, "npx", "-p", "pkg", "tool"),
	C("pnpm", 3, "pnpm", "-C", "sub", "install"),
	C("yarn", 3, "yarn", "--cwd", "sub", "add", "x"),
	/* pip: optparse's attached and combined forms */
	C("pip", 2, "pip", "-qq", "install", "x"),
	C("pip3", 3, "pip3", "--cache-dir", "/c", "install", "x"),
	C("pip3.11", 2, "pip3.11", "--cache-dir=/c", "install", "x"),
	C(NULL, 0, "pip", "--isol", "install"),        /* abbreviations are not read */
	/* python: -m names the program, -c ends the options */
	C("pip", 3, "python3", "-m", "pip", "install", "x"),
	C("pip", 2, "python3.11", "-mpip", "install", "x"),
	C("pip", 4, "python3", "-u", "-m", "pip", "install", "x"),
	C("pip", 3, "python3", "-um", "pip", "install", "x"),
	C("pip", 5, "python3", "-m", "pip", "--isolated", "-q", "install", "x"),
	C("pip", 3, "python", "-m", "pip"),                       /* the module, no arguments */
	C("pip", 3, "python3", "-m", "pip", "--frob", "install"), /* the module stays */
	C("http.server", 4, "python3", "-I", "-m", "http.server", "8000"),
	C("python3", 3, "python3", "-W", "ignore", "-c", "print(1)"),
	C("python3", 2, "python3", "-Wignore", "script.py", "a"),
	C("python3", 3, "python3", "-X", "dev", "-"),
	C(NULL, 0, "python3", "-c", "print(1)"),      /* already as written */
	C(NULL, 0, "python3", "-uc", "print(1)"),     /* -c in a cluster: not its own word */
	C(NULL, 0, "python3", "-m"),
	C(NULL, 0, "python3", "-m", "../evil"),
	C(NULL, 0, "python3", "-m", ""),
	C(NULL, 0, "python3", "-m", "p\xc3\xaep"),    /* ASCII only: the name is printed */
	C(NULL, 0, "python3", "--help", "-m", "pip"),
	C(NULL, 0, "python3", "-Z", "-m", "pip"),
	/* cargo: +toolchain, clap forms */
	C("cargo", 2, "cargo", "+nightly", "build"),
	C("cargo", 4, "cargo", "+nightly", "-vv", "--locked", "test", "--all"),
	C("cargo", 2, "cargo", "-Cdir", "build"),
	C("cargo", 3, "cargo", "--config", "k=v", "publish"),
	C(NULL, 0, "cargo", "build", "+nightly"),
	C(NULL, 0, "cargo", "--list"),
	/* docker, kubectl: pflag */
	C("docker", 3, "docker", "-H", "unix:///x", "run", "img"),
	C("docker", 3, "docker", "--tls=true", "-c=ctx", "push", "img"),
	C("docker", 2, "docker", "--tls", "true", "push"), /* pflag: "true" is no value, the command */
	C("kubectl", 2, "kubectl", "-nkube-system", "delete", "pod", "x"),
	C("kubectl", 3, "kubectl", "--context", "prod", "apply", "-f", "x"),
	C("uv", 3, "uv", "--directory", "d", "pip", "install", "x"),
	C("poetry", 3, "poetry", "-C", "d", "add", "x"),
	/* not in the table, or no options listed */
	C(NULL, 0, "ls", "-l", "x"),
	C(NULL, 0, "go", "-C", "d", "build"),
	C(NULL, 0, "gh", "--repo", "x", "pr"),
};

static size_t nwords(const char *const *w)
{
	size_t n = 0;
	while (w[n])
		n++;
	return n;
}

/* argv[1..] joined by single spaces into buf. */
static size_t join(const char *const *w, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 1; w[i]; i++) {
		size_t l = strlen(w[i]);
		assert_true(n + l + 2 <= cap);
		if (i > 1)
			buf[n++] = ' ';
		memcpy(buf + n, w[i], l + 1);
		n += l;
	}
	return n;
}

static void check_case(const struct ncase *c)
{
	char joined[1024];
	struct cli_norm a, b;
	const char *base = c->words[0];
	size_t len = join(c->words, joined, sizeof joined), argc = nwords(c->words);
	bool ra = cli_normalize(base, strlen(base), c->words, &a);
	bool rb = cli_normalize_joined(base, strlen(base), joined, len, &b);
	if (ra != (c->program != NULL) || rb != ra)
		fail_msg("line %d: normal form %d (joined %d), want %d", c->line, ra, rb,
			 c->program != NULL);
	if (!ra)
		return;
	if (a.program_len != strlen(c->program) || memcmp(a.program, c->program, a.program_len) ||
	    a.start != (size_t)c->start)
		fail_msg("line %d: program %.*s start %zu, want %s %d", c->line, (int)a.program_len,
			 a.program, a.start, c->program, c->start);
	/* the offset is where argv[start] sits in the joined arguments */
	size_t off = 0;
	for (size_t i = 1; i < a.start; i++)
		off += strlen(c->words[i]) + 1;
	assert_int_equal(a.offset, off);
	assert_true(a.start <= argc);
	if (a.start < argc)
		assert_memory_equal(joined + off, c->words[a.start], strlen(c->words[a.start]));
	assert_int_equal(b.start, a.start);
	assert_int_equal(b.offset, a.offset);
	assert_int_equal(b.module, a.module);
	assert_int_equal(b.program_len, a.program_len);
	assert_memory_equal(b.program, a.program, a.program_len);
	assert_int_equal(a.module, strcmp(c->program, base) != 0);
}

static void test_normalize(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_case(&cases[i]);
}

/* No arguments, NULL argv, empty joined text; a word holding a space in argv is one word. */
static void test_normalize_edges(void **state)
{
	(void)state;
	struct cli_norm n = { 0 };
	assert_false(cli_normalize("git", 3, NULL, &n));
	assert_false(cli_normalize_joined("git", 3, "", 0, &n));
	assert_false(cli_normalize_joined("git", 3, NULL, 5, &n));
	const char *spaced[] = { "git", "-c", "user.name=A B", "commit", NULL };
	assert_true(cli_normalize("git", 3, spaced, &n));
	assert_int_equal(n.start, 3);
	assert_int_equal(n.offset, strlen("-c user.name=A B "));
	/* joined, the same text splits at the space: "B" reads as the subcommand */
	assert_true(cli_normalize_joined("git", 3, "-c user.name=A B commit", 23, &n));
	assert_int_equal(n.start, 3);
	assert_int_equal(n.offset, strlen("-c user.name=A "));
	/* joined text is read to its length only */
	assert_true(cli_normalize_joined("git", 3, "-p statusXYZ", 9, &n));
	assert_int_equal(n.offset, 3);
	/* a trailing empty argument */
	const char *empty_last[] = { "python3", "-m", "pip", "", NULL };
	assert_true(cli_normalize("python3", 7, empty_last, &n));
	assert_int_equal(n.start, 3);
	assert_int_equal(n.offset, 7);
}

/* Options beyond CLI_MAX_WORDS are not read; a long argv after the subcommand is no matter. */
static void test_normalize_long(void **state)
{
	(void)state;
	enum { MANY = 5000 };
	const char **argv = calloc(MANY + 3, sizeof *argv);
	assert_non_null(argv);
	argv[0] = "git";
	for (size_t i = 1; i <= MANY; i++)
		argv[i] = "--no-pager";
	argv[MANY + 1] = "status";
	struct cli_norm n;
	assert_false(cli_normalize("git", 3, argv, &n));
	for (size_t i = CLI_MAX_WORDS + 1; i <= MANY; i++)
		argv[i] = "x";
	argv[MANY + 1] = NULL;
	argv[CLI_MAX_WORDS] = "status"; /* CLI_MAX_WORDS - 1 options, then the subcommand */
	assert_true(cli_normalize("git", 3, argv, &n));
	assert_int_equal(n.start, CLI_MAX_WORDS);
	argv[CLI_MAX_WORDS] = "--no-pager";
	argv[CLI_MAX_WORDS + 1] = "status"; /* CLI_MAX_WORDS options: one too many */
	assert_false(cli_normalize("git", 3, argv, &n));
	free(argv);
}

/* A random word for p: one of its options in one of its forms, or another word. */
static const char *random_word(const struct cli_program *p, unsigned *seed, char *room, size_t cap)
{
	static const char *const extra[] = { "--", "-", "+nightly", "true", "false", "x=y", "-Z",
					     "--frob", "-m", "pip", "status", "install", "" };
	unsigned pick = (unsigned)rand_r(seed);
	if (!p->noptions || pick % 3 == 0)
		return extra[pick / 3 % (sizeof extra / sizeof extra[0])];
	const struct cli_option *o = &p->options[pick / 3 % p->noptions];
	static const char *const forms[] = { "%s", "%s=v", "%sv" };
	snprintf(room, cap, forms[pick / 7 % 3], o->name);
	return room;
}

/*
 * One random command's normal form, checked: the argv and joined
 * normalizers agree, the offset is where argv[start] sits, and a kept first
 * argument is no option (but python's -c, which keeps its word).  Returns
 * 0 (no normal form), 1 (one), 2 (one naming a module).
 */
static int check_random(const char *const *argv, size_t argc)
{
	char joined[MAXW * 64 + MAXW];
	size_t len = join(argv, joined, sizeof joined);
	struct cli_norm a, b;
	bool ra = cli_normalize(argv[0], strlen(argv[0]), argv, &a);
	bool rb = cli_normalize_joined(argv[0], strlen(argv[0]), joined, len, &b);
	if (ra != rb)
		fail_msg("%s %s: argv %d, joined %d", argv[0], joined, ra, rb);
	if (!ra)
		return 0;
	assert_int_equal(a.start, b.start);
	assert_int_equal(a.offset, b.offset);
	assert_int_equal(a.module, b.module);
	assert_true(a.start >= 1 && a.start <= argc);
	size_t off = 0;
	for (size_t k = 1; k < a.start; k++)
		off += strlen(argv[k]) + 1;
	assert_int_equal(a.offset, off);
	const char *kept = a.start < argc ? argv[a.start] : "";
	bool python_c = strncmp(kept, "-c", 2) == 0 && strncmp(argv[0], "python", 6) == 0;
	if (!a.module && kept[0] == '-' && kept[1] && !python_c)
		fail_msg("%s %s: kept an option first (%s)", argv[0], joined, kept);
	return a.module ? 2 : 1;
}

/* Random commands made of each program's own options, values, "--", "-", "+x", "true"... */
static void test_normalize_random(void **state)
{
	(void)state;
	enum { ROUNDS = 3000 };
	unsigned seed = 12345;
	char pool[MAXW][64];
	size_t normalized = 0, modules = 0;
	for (size_t i = 0; i < cli_nprograms; i++) {
		const struct cli_program *p = &cli_programs[i];
		for (int r = 0; r < ROUNDS; r++) {
			const char *argv[MAXW + 1] = { p->names[0] };
			size_t argc = 1 + (size_t)(rand_r(&seed) % (MAXW - 1));
			for (size_t k = 1; k < argc; k++)
				argv[k] = random_word(p, &seed, pool[k], sizeof pool[k]);
			argv[argc] = NULL;
			int got = check_random(argv, argc);
			normalized += got != 0;
			modules += got == 2;
		}
	}
	/* the commands made reach the normal forms, modules included */
	print_message("%zu of %d random commands normalized, %zu to a module\n", normalized,
		      (int)(ROUNDS * cli_nprograms), modules);
	assert_true(normalized > ROUNDS);
	assert_true(modules > 10);
}

/* ---- decisions ------------------------------------------------------------------------- */

static const char policy_yaml[] =
	"version: 1\n"
	"default: {exec: ask}\n"
	"deny:\n"
	"  - command: git\n    args: \"push *--force*\"\n"     /* 0 */
	"  - command: git\n    args: \"-c core.pager=*\"\n"    /* 1: a raw-form rule */
	"ask:\n"
	"  - command: pip\n    args: install\n    match: prefix\n" /* 2 */
	"  - command: npm\n    args: install\n    match: prefix\n" /* 3 */
	"allow:\n"
	"  - command: git\n    args: \"commit *\"\n"           /* 4 */
	"  - command: git\n    args: status\n    match: prefix\n" /* 5 */
	"  - command: /usr/bin/pip\n"                          /* 6: a path never names a module */
	"  - command: python3\n    args: \"-c *\"\n";          /* 7 */

static struct policy_verdict exec_v(const struct policy_image *img, const char *prog,
				    const char *const *argv, bool *normal)
{
	return policy_decide_exec_form(img, prog, argv, normal);
}

#define V(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void expect(const struct policy_image *img, const char *prog, const char *const *argv,
		   enum policy_decision d, int32_t rule, bool normal)
{
	bool nf = !normal;
	struct policy_verdict v = exec_v(img, prog, argv, &nf);
	static char joined[128 * 1024];
	size_t len = join(argv, joined, sizeof joined);
	if (v.decision != d || v.rule != rule || nf != normal)
		fail_msg("%s %s: %s rule %d normal %d, want %s rule %d normal %d", prog, joined,
			 policy_decision_name(v.decision), v.rule, nf, policy_decision_name(d), rule,
			 normal);
	/* the same through policy_decide_exec and, no word holding a space, the joined form */
	struct policy_verdict w = policy_decide_exec(img, prog, argv);
	assert_int_equal(w.decision, v.decision);
	assert_int_equal(w.rule, v.rule);
	bool spaced = false;
	for (size_t i = 1; argv[i]; i++)
		spaced |= strchr(argv[i], ' ') != NULL;
	if (!spaced) {
		w = policy_decide_exec_joined(img, prog, joined, len);
		assert_int_equal(w.decision, v.decision);
		assert_int_equal(w.rule, v.rule);
	}
}

static void test_decide_forms(void **state)
{
	(void)state;
	struct test_policy t;
	test_policy_build(&t, policy_yaml);
	const struct policy_image *img = t.img;
	/* global options before the subcommand no longer escape a deny ... */
	expect(img, "/usr/bin/git", V("git", "-c", "a=b", "push", "--force"), POLICY_DENY, 0, true);
	expect(img, "git", V("git", "-C", "d", "--no-pager", "push", "x", "--force"), POLICY_DENY, 0,
	       true);
	/* ... nor miss an allow or an ask */
	expect(img, "/usr/bin/git", V("git", "-c", "user.name=x", "-c", "user.email=y", "commit", "-m", "m"),
	       POLICY_ALLOW, 4, true);
	expect(img, "/usr/bin/git", V("git", "--no-optional-locks", "status"), POLICY_ALLOW, 5, true);
	expect(img, "/usr/bin/python3", V("python3", "-m", "pip", "install", "x"), POLICY_ASK, 2, true);
	expect(img, "/usr/bin/python3.11", V("python3.11", "-I", "-mpip", "install", "x"), POLICY_ASK,
	       2, true);
	expect(img, "/usr/bin/npm", V("npm", "--prefix", "x", "install"), POLICY_ASK, 3, true);
	/* the raw form keeps its meaning: a rule on the options still decides, and wins a tie */
	expect(img, "git", V("git", "-c", "core.pager=less", "status"), POLICY_DENY, 1, false);
	expect(img, "git", V("git", "commit", "-m", "x"), POLICY_ALLOW, 4, false);
	expect(img, "/usr/bin/python3", V("python3", "-c", "print(1)"), POLICY_ALLOW, 7, false);
	expect(img, "/usr/bin/python3", V("python3", "-u", "-c", "print(1)"), POLICY_ALLOW, 7, true);
	/* an unknown option: the raw form alone */
	expect(img, "git", V("git", "--frobnicate", "push", "--force"), POLICY_ASK, -1, false);
	/* a module has no path: /usr/bin/pip's rule is not pip's module */
	expect(img, "/usr/bin/pip", V("pip", "list"), POLICY_ALLOW, 6, false);
	expect(img, "/usr/bin/python3", V("python3", "-m", "pip", "list"), POLICY_ASK, -1, false);
	/* the real argv decides where words are: a value holding a space cannot fake a subcommand */
	expect(img, "git", V("git", "-c", "a=b status", "push", "--force"), POLICY_DENY, 0, true);
	expect(img, "git", V("git", "-c", "x=y push --force", "status"), POLICY_ALLOW, 5, true);
	test_policy_free(&t);
}

/* argv[0] naming another program: its rules may refuse, never allow. */
static void test_decide_argv0(void **state)
{
	(void)state;
	struct test_policy t;
	test_policy_build(&t, "version: 1\n"
			      "default: {exec: ask}\n"
			      "deny:\n"
			      "  - command: rm\n    args: \"-rf /*\"\n"  /* 0 */
			      "ask:\n"
			      "  - command: git-push\n"                   /* 1 */
			      "allow:\n"
			      "  - command: git\n"                        /* 2 */
			      "  - command: ls\n");                       /* 3 */
	struct policy_verdict v;
	/* `exec -a git-push git origin main`: git runs push */
	v = policy_decide_exec(t.img, "/usr/bin/git", V("git-push", "origin", "main"));
	assert_int_equal(v.decision, POLICY_ASK);
	assert_int_equal(v.rule, 1);
	v = policy_decide_exec(t.img, "/usr/bin/git", V("/usr/lib/git-core/git-push", "origin"));
	assert_int_equal(v.decision, POLICY_ASK);
	/* a multi-call binary run as rm */
	v = policy_decide_exec(t.img, "/usr/bin/busybox", V("rm", "-rf", "/home/u"));
	assert_int_equal(v.decision, POLICY_DENY);
	assert_int_equal(v.rule, 0);
	/* an allowed name in argv[0] allows nothing: the program's own default decides */
	v = policy_decide_exec(t.img, "/opt/evil", V("ls", "-la"));
	assert_int_equal(v.decision, POLICY_ASK);
	assert_int_equal(v.rule, -1);
	/* the same name, or a login shell's "-bash": nothing changes */
	v = policy_decide_exec(t.img, "/usr/bin/git", V("git", "status"));
	assert_int_equal(v.decision, POLICY_ALLOW);
	assert_int_equal(v.rule, 2);
	v = policy_decide_exec(t.img, "/usr/bin/ls", V("-ls"));
	assert_int_equal(v.decision, POLICY_ALLOW);
	test_policy_free(&t);
}

/* A long argument list (mmap'ed join) decides both forms alike. */
static void test_decide_long(void **state)
{
	(void)state;
	struct test_policy t;
	test_policy_build(&t, policy_yaml);
	enum { BIG = 40000 };
	char *big = malloc(BIG + 1);
	assert_non_null(big);
	memset(big, 'a', BIG);
	big[BIG] = '\0';
	expect(t.img, "git", V("git", "-c", big, "push", "--force", big), POLICY_DENY, 0, true);
	expect(t.img, "git", V("git", "-c", "x=y", "status", big), POLICY_ALLOW, 5, true);
	free(big);
	test_policy_free(&t);
}

/*
 * The built-in default policy (being rewritten: only robust facts): a forced
 * push behind -c is not allowed and a rule says so, local git work behind
 * global options runs, and pip / npm behind python -m / --prefix are decided
 * as pip install / npm install are.
 */
static void test_default_policy(void **state)
{
	(void)state;
	size_t len;
	const char *text = policy_default_text(&len);
	char *yaml = malloc(len + 1);
	assert_non_null(yaml);
	memcpy(yaml, text, len);
	yaml[len] = '\0';
	struct test_policy t;
	test_policy_build(&t, yaml);
	struct policy_verdict v, w;
	v = policy_decide_exec(t.img, "/usr/bin/git", V("git", "-c", "a=b", "push", "--force"));
	w = policy_decide_exec(t.img, "/usr/bin/git", V("git", "push", "--force"));
	assert_int_not_equal(v.decision, POLICY_ALLOW);
	assert_true(v.rule >= 0);
	assert_int_equal(v.decision, w.decision);
	v = policy_decide_exec(t.img, "/usr/bin/git",
			       V("git", "-c", "user.name=x", "-c", "user.email=y", "commit", "-m", "m"));
	assert_int_equal(v.decision, POLICY_ALLOW);
	v = policy_decide_exec(t.img, "/usr/bin/git", V("git", "--no-optional-locks", "status"));
	assert_int_equal(v.decision, POLICY_ALLOW);
	v = policy_decide_exec(t.img, "/usr/bin/python3", V("python3", "-m", "pip", "install", "x"));
	w = policy_decide_exec(t.img, "/usr/bin/pip", V("pip", "install", "x"));
	assert_int_equal(v.decision, w.decision);
	v = policy_decide_exec(t.img, "/usr/bin/npm", V("npm", "--prefix", "x", "install"));
	w = policy_decide_exec(t.img, "/usr/bin/npm", V("npm", "install"));
	assert_int_equal(v.decision, w.decision);
	test_policy_free(&t);
	free(yaml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_normalize_edges),
		cmocka_unit_test(test_normalize_long),
		cmocka_unit_test(test_normalize_random),
		cmocka_unit_test(test_decide_forms),
		cmocka_unit_test(test_decide_long),
		cmocka_unit_test(test_decide_argv0),
		cmocka_unit_test(test_default_policy),
	};
	return cmocka_run_group_tests_name("cli: global options and module runners", tests, NULL,
					   NULL);
}
