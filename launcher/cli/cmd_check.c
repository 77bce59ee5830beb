/* cmd_check.c — `airlock check`: decides one exec, open or connect against the policy, or validates it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/launcher.h"
#include "launcher/profiles/profile.h"
#include "core/canon.h"
#include "policy/cli.h"

#define CHECK_SYNOPSIS                                                                              \
	"usage: airlock check [--policy FILE] [--workspace DIR] [--profile NAME] exec CMD [ARG...]\n" \
	"       airlock check [--policy FILE] [--workspace DIR] [--profile NAME] open PATH\n"        \
	"                     [--read|--write|--exec]\n"                                            \
	"       airlock check [--policy FILE] [--workspace DIR] [--profile NAME] connect HOST:PORT\n" \
	"       airlock check [--policy FILE] [--profile NAME]\n"

const char cmd_check_usage[] =
	CHECK_SYNOPSIS
	"\n"
	"Decides one action as `airlock run` would, and prints the decision, the\n"
	"rule that made it (file:line, or the default) and the rule's reason.\n"
	"Without an action, validates the policy and prints \"FILE: ok, N rules\".\n"
	"\n"
	"  exec CMD [ARG...]   starting a program; CMD without '/' is looked up in $PATH\n"
	"  open PATH           opening a file for reading (--read, the default), writing\n"
	"                      (--write) or executing (--exec); PATH is made canonical:\n"
	"                      absolute, with '.', '..' and symlinks resolved\n"
	"  connect HOST:PORT   a connection; write IPv6 addresses as [ADDR]:PORT\n"
	"\n"
	"  --policy FILE       the policy to use; otherwise the first of\n"
	"                      ./.airlock/policy.yaml (in the workspace),\n"
	"                      $XDG_CONFIG_HOME/airlock/policy.yaml (~/.config by\n"
	"                      default) and the built-in default policy\n"
	"  --workspace DIR     the directory \"./\" patterns mean (default: the current\n"
	"                      directory)\n"
	"  --profile NAME      the agent profile merged into the policy, as `run` does:\n"
	"                      claude, codex, gemini, aider, none or auto (default: the\n"
	"                      policy's profile: key, else detected from exec's CMD);\n"
	"                      printed as \"profile: NAME (...)\" when one is in effect\n"
	"\n"
	"Exit status: 0 allow; 3 ask; 4 deny; 2 usage error or a policy that does\n"
	"not load (printed as file:line:column: message); 1 any other failure.\n";

enum check_action {
	CHECK_VALIDATE = 0,
	CHECK_EXEC,
	CHECK_OPEN,
	CHECK_CONNECT,
	CHECK_ACTION_MAX
};

/* A destination split from HOST:PORT or [V6]:PORT. */
struct check_destination {
	char host[256];
	unsigned port;
};

/* The parsed command line. */
struct check_args {
	struct policy_source_options source;
	enum check_action action;
	char **words; /* EXEC: CMD [ARG...]; OPEN: PATH; CONNECT: HOST:PORT */
	int nwords;
	unsigned file_action;             /* OPEN: one POLICY_FILE_* bit */
	struct check_destination destination; /* CONNECT */
	const char *profile;              /* --profile NAME, or NULL */
	char *program;                    /* owned: EXEC's CMD resolved (detects the profile) */
	struct profile_choice choice;     /* the profile in effect */
};

/* parse_options() result: the command line asked for help. */
#define CHECK_HELP (-2)

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "airlock: check: " + the message and the usage to stderr; returns -1. */
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("airlock: check: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	fputs(CHECK_SYNOPSIS "See 'airlock check --help'.\n", stderr);
	return -1;
}

/* Matches "--NAME VALUE" or "--NAME=VALUE" at argv[*i]; stores VALUE.  Returns 1, 0 or -1. */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	int r = airlock_option_value(argc, argv, i, name, value);
	return r < 0 ? usage_error("%s needs a value", name) : r;
}

/* Parses the options before the action word.  Returns the index of the action word, or -1. */
static int parse_options(int argc, char **argv, struct check_args *a)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		int r = option_value(argc, argv, &i, "--policy", &a->source.policy_path);
		if (r == 0)
			r = option_value(argc, argv, &i, "--workspace", &a->source.workspace);
		if (r == 0)
			r = option_value(argc, argv, &i, "--profile", &a->profile);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
		if (airlock_is_help(argv[i])) {
			fputs(cmd_check_usage, stdout);
			return CHECK_HELP;
		}
		return usage_error("unknown option: %s", argv[i]);
	}
	return i;
}

static int parse_port(const char *s, unsigned *port)
{
	if (!*s || strlen(s) > 5 || strspn(s, "0123456789") != strlen(s))
		return -1;
	unsigned long v = strtoul(s, NULL, 10);
	if (v < 1 || v > 65535)
		return -1;
	*port = (unsigned)v;
	return 0;
}

/* Splits HOST:PORT or [V6]:PORT. */
static int parse_destination(const char *s, struct check_destination *d)
{
	const char *host = s, *end, *colon;
	if (s[0] == '[') {
		host = s + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			return usage_error("expected [ADDR]:PORT, got: %s", s);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return usage_error("expected HOST:PORT, got: %s", s);
		end = colon;
		if (memchr(s, ':', (size_t)(colon - s)))
			return usage_error("write an IPv6 address as [ADDR]:PORT, got: %s", s);
	}
	size_t n = (size_t)(end - host);
	if (n == 0 || n >= sizeof(d->host))
		return usage_error("bad host in: %s", s);
	memcpy(d->host, host, n);
	d->host[n] = '\0';
	if (parse_port(colon + 1, &d->port) < 0)
		return usage_error("bad port (1-65535) in: %s", s);
	return 0;
}

static int parse_open(struct check_args *a)
{
	char **path = NULL;
	a->file_action = POLICY_FILE_READ;
	for (int i = 0; i < a->nwords; i++) {
		const char *w = a->words[i];
		/* --read, --write, --exec: the file actions' names */
		unsigned bit = strncmp(w, "--", 2) == 0 ? policy_file_action_parse(w + 2) : 0;
		if (bit)
			a->file_action = bit;
		else if (strncmp(w, "--", 2) == 0)
			return usage_error("unknown option for open: %s (write ./%s for such a file)", w,
					   w);
		else if (path)
			return usage_error("open takes one PATH, got another: %s", w);
		else
			path = &a->words[i];
	}
	if (!path || !**path)
		return usage_error("%s needs a PATH", "open");
	a->words = path;
	a->nwords = 1;
	return 0;
}

/* Parses the action word and what follows it. */
static int parse_action(int argc, char **argv, int i, struct check_args *a)
{
	if (i >= argc) {
		a->action = CHECK_VALIDATE;
		return 0;
	}
	const char *verb = argv[i];
	a->words = argv + i + 1;
	a->nwords = argc - i - 1;
	if (strcmp(verb, "exec") == 0) {
		a->action = CHECK_EXEC;
		return a->nwords >= 1 && a->words[0][0] ? 0 : usage_error("%s needs a CMD", verb);
	}
	if (strcmp(verb, "open") == 0) {
		a->action = CHECK_OPEN;
		return parse_open(a);
	}
	if (strcmp(verb, "connect") == 0) {
		a->action = CHECK_CONNECT;
		if (a->nwords != 1)
			return usage_error("%s takes one HOST:PORT", verb);
		return parse_destination(a->words[0], &a->destination);
	}
	return usage_error("unknown action: %s (expected exec, open or connect)", verb);
}

/* Prints s with control characters escaped; inside quotes also '"' and '\'. */
static void print_escaped(const char *s, bool quoted)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else if (quoted && (*p == '"' || *p == '\\'))
			printf("\\%c", *p);
		else
			putchar(*p);
	}
}

static void print_quoted(const char *label, const char *s)
{
	printf(" %s\"", label);
	print_escaped(s, true);
	putchar('"');
}

/* Writes a rule's file actions as "read,write" into buf. */
static void format_actions(unsigned actions, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < POLICY_FILE_ACTIONS; i++) {
		const struct policy_word *w = &policy_file_action_words[i];
		if (!(actions & (unsigned)w->value))
			continue;
		size_t n = strlen(buf);
		snprintf(buf + n, size - n, "%s%s", n ? "," : "", w->name);
	}
}

static void print_rule(const struct policy_rule_info *r)
{
	printf("  rule:   ");
	print_escaped(r->file, false);
	printf(":%u %s %s", r->line, policy_list_name(r->list), policy_rule_kind_name(r->kind));
	print_quoted("", r->pattern);
	if (r->kind == POLICY_RULE_COMMAND && r->args)
		print_quoted("args ", r->args);
	if (r->kind == POLICY_RULE_FILE && r->actions != POLICY_FILE_ALL) {
		char acts[32];
		format_actions(r->actions, acts, sizeof(acts));
		printf(" action %s", acts);
	}
	if (r->match != POLICY_MATCH_GLOB)
		printf(" match %s", policy_match_name(r->match));
	putchar('\n');
	if (r->reason) {
		printf("  reason: ");
		print_escaped(r->reason, false);
		putchar('\n');
	}
}

static void print_default(const struct policy_image *img, enum policy_action kind,
			  enum policy_decision d)
{
	const char *kind_name = policy_action_name(kind);

	if (policy_image_default(img, kind) != d) {
		printf("  rule:   none\n  reason: the engine could not evaluate the action: fail closed\n");
		return;
	}
	printf("  rule:   default (%s)\n", kind_name);
	printf("  reason: no rule matches; the policy's default for %s is %s\n", kind_name,
	       policy_decision_name(d));
}

/* Prints the verdict's explanation and returns the exit status it maps to. */
static int report(const struct policy_image *img, struct policy_verdict v, enum policy_action kind)
{
	struct policy_rule_info info;
	if (v.rule >= 0 && policy_rule_describe(img, v.rule, &info) == 0)
		print_rule(&info);
	else
		print_default(img, kind, v.decision);
	switch (v.decision) {
	case POLICY_ALLOW:
		return AIRLOCK_EXIT_OK;
	case POLICY_ASK:
		return AIRLOCK_EXIT_ASK;
	default:
		return AIRLOCK_EXIT_DENY;
	}
}

static void print_header(enum policy_decision d, const char *verb)
{
	printf("%-5s %s", policy_decision_name(d), verb);
}

static int check_exec(const struct policy_source *src, const struct check_args *a)
{
	bool normal_form;
	struct policy_verdict v = policy_decide_exec_form(src->img, a->program,
							  (const char *const *)a->words, &normal_form);
	print_header(v.decision, "exec");
	for (int i = 0; i < a->nwords; i++) {
		putchar(' ');
		print_escaped(a->words[i], false);
	}
	putchar('\n');
	/* decided as the command's normal form (policy/cli.h): say which */
	struct cli_norm n;
	const char *base = strrchr(a->program, '/');
	base = base ? base + 1 : a->program;
	if (normal_form && cli_normalize(base, strlen(base), (const char *const *)a->words, &n)) {
		printf("  as:     ");
		if (n.module) /* a module name: ASCII letters, digits, '_' and '.' (policy/cli.c) */
			fwrite(n.program, 1, n.program_len, stdout);
		else
			print_escaped(a->words[0], false);
		for (size_t i = n.start; i < (size_t)a->nwords; i++) {
			putchar(' ');
			print_escaped(a->words[i], false);
		}
		putchar('\n');
	}
	return report(src->img, v, POLICY_ACTION_EXEC);
}

static int check_open(const struct policy_source *src, const struct check_args *a)
{
	char path[PATH_MAX];
	int n = canon_path(AT_FDCWD, a->words[0], 0, path, sizeof path);
	if (n < 0) {
		errno = -n;
		airlock_err("check: cannot make %s canonical: %m", a->words[0]);
		return AIRLOCK_EXIT_FAILURE;
	}
	struct policy_verdict v = policy_decide_open(src->img, path, a->file_action);
	/* "execute", not "exec": the header of a command check starts with "exec". */
	print_header(v.decision, a->file_action == POLICY_FILE_EXEC
					 ? "execute"
					 : policy_file_action_name(a->file_action));
	putchar(' ');
	print_escaped(path, false);
	putchar('\n');
	return report(src->img, v, policy_file_action_kind(a->file_action));
}

static int check_connect(const struct policy_source *src, const struct check_args *a)
{
	const struct check_destination *d = &a->destination;
	struct policy_verdict v = policy_decide_connect(src->img, d->host, d->port);
	print_header(v.decision, "connect");
	putchar(' ');
	print_escaped(a->words[0], false);
	putchar('\n');
	return report(src->img, v, POLICY_ACTION_CONNECT);
}

static int validate(const struct policy_source *src)
{
	uint32_t n = policy_image_rule_count(src->img);
	print_escaped(src->name, false);
	printf(": ok, %u rule%s\n", n, n == 1 ? "" : "s");
	return AIRLOCK_EXIT_OK;
}

/* Between load and compile: the profile chosen and merged in, as `run` does. */
static int amend_policy(struct policy *p, void *arg, struct policy_error *err)
{
	struct check_args *a = arg;
	if (profile_choose(a->profile, p, a->program, a->action == CHECK_EXEC ? a->words : NULL,
			   &a->choice, err) < 0)
		return -1;
	return profile_apply(&a->choice, p, err) < 0 ? -1 : 0;
}

/* "profile: NAME (...)" when a profile is in effect. */
static void print_profile(const struct check_args *a)
{
	char what[256];
	if (!a->choice.profile)
		return;
	profile_describe(&a->choice, what, sizeof what);
	printf("  profile: %s\n", what);
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { 0 };
	int i = parse_options(argc, argv, &a);
	if (i == CHECK_HELP)
		return AIRLOCK_EXIT_OK;
	if (i < 0 || parse_action(argc, argv, i, &a) < 0)
		return AIRLOCK_EXIT_USAGE;
	if (a.action == CHECK_EXEC && !(a.program = canon_program(a.words[0]))) {
		airlock_err("check: cannot resolve %s: %m", a.words[0]);
		return AIRLOCK_EXIT_FAILURE;
	}
	a.source.amend = amend_policy;
	a.source.amend_arg = &a;
	struct policy_source src;
	struct policy_error err;
	enum policy_source_status st = policy_source_open(&a.source, &src, &err);
	if (st != POLICY_SOURCE_OK) {
		free(a.program);
		profile_choice_release(&a.choice);
		return policy_source_report(st, &err);
	}
	int status;
	switch (a.action) {
	case CHECK_EXEC:
		status = check_exec(&src, &a);
		break;
	case CHECK_OPEN:
		status = check_open(&src, &a);
		break;
	case CHECK_CONNECT:
		status = check_connect(&src, &a);
		break;
	default:
		status = validate(&src);
		break;
	}
	print_profile(&a);
	policy_source_release(&src);
	free(a.program);
	profile_choice_release(&a.choice);
	return status;
}
