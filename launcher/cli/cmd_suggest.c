/* cmd_suggest.c — `airlock suggest`: its options and its steps; the work is launcher/suggest/'s. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/launcher.h"
#include "launcher/log/logread.h"
#include "launcher/suggest/suggest.h"

#define SUGGEST_SYNOPSIS \
	"usage: airlock suggest LOG [--session ID] [--workspace DIR] [-o|--output FILE]\n"

const char cmd_suggest_usage[] =
	SUGGEST_SYNOPSIS
	"\n"
	"Reads an audit log and prints a policy (YAML, commented) that allows what\n"
	"was allowed or approved, denies what was denied (by the policy, a human,\n"
	"session memory, --headless or a timeout) and asks about what is still\n"
	"logged as ask.  Fed back to `airlock check`, it decides every event of the\n"
	"log as the log recorded it.\n"
	"\n"
	"The learning run: run the agent once with a policy whose default is allow\n"
	"(`default: allow`) and with --trace, so that allowed file reads and writes\n"
	"are logged too, for example\n"
	"    airlock run --trace --policy learn.yaml --log learn.jsonl -- AGENT\n"
	"    airlock suggest learn.jsonl --output .airlock/policy.yaml\n"
	"(`airlock run --headless --default-allow` also allows what its policy asks\n"
	"about).  Then read the policy: it allows what that run did, nothing more\n"
	"than the generalisations below, less what the carried-over deny rules\n"
	"below deny (reading .env stays denied even when that run read it).\n"
	"\n"
	"Generalising, an allow rule is widened only as long as it covers nothing\n"
	"the log denied or asked about (it falls back to a narrower pattern, down\n"
	"to the exact path, arguments or destination), and a deny rule only as long\n"
	"as it covers nothing the log allowed:\n"
	"  - a program's arguments to the prefix all its allowed runs share\n"
	"    (`git commit` and `git status`: any git; with a denied `git push`:\n"
	"    one prefix rule per subcommand), by program name (its full path when\n"
	"    only that tells allowed and denied runs apart);\n"
	"  - paths in the workspace to ./** (then ./DIR/**), paths in the home\n"
	"    directory to ~/DIR/**, paths in /tmp to /tmp/**; other paths, and the\n"
	"    paths of deny and ask rules, stay exact;\n"
	"  - a host's ports to the host (any port); otherwise one rule per port.\n"
	"Allowed reads need no rule: the suggested default allows reads, and asks\n"
	"about any other program, write or connection the log never saw.\n"
	"Each rule's comment says how many events it covers and who decided them.\n"
	"\n"
	"The deny rules of the built-in default policy (secrets such as .env and\n"
	"~/.ssh, private keys, destructive commands, metadata services), and those\n"
	"of the policy each recorded session ran under when its file still loads,\n"
	"are carried over in blocks of their own, with their reasons: a permissive\n"
	"learning run does not lose them.  A carried-over rule that would deny\n"
	"something a person approved (decided_by human or session) or an explicit\n"
	"rule of the recorded policy allowed or asked about (the event names the\n"
	"rule) is left out, said in a comment and on stderr: they decided otherwise.\n"
	"What only a default allowed -- the recorded policy's (no rule, as in the\n"
	"learning run) or --default-allow's (decided_by default) -- leaves no rule\n"
	"out: the rule is kept, denies that action (a comment at it and a line on\n"
	"stderr say so), and the self-check lists the action as \"kept denied\".\n"
	"A person's or a rule's yes is to those actions alone: their allow (or ask) rules stay exact,\n"
	"no other allow or ask rule covers what the left-out rule denied (tried on\n"
	"its patterns made concrete: `rm -rf /`, `~/.ssh/probe`), and what else it\n"
	"denied stays denied where the policy language can say so: a file rule's\n"
	"other actions; for one program with literal arguments then `*` (or any),\n"
	"and for one path and what is below it, a regex for all but the log's.\n"
	"\n"
	"A path whose name held bytes that are not UTF-8 is logged with U+FFFD in\n"
	"their place; a deny or ask rule for it is a glob with `*` for each run of\n"
	"U+FFFD (wider, never narrower), and no allow rule names it (left to the\n"
	"default, said in a comment).\n"
	"\n"
	"  LOG               the audit log (JSON Lines), or - for standard input\n"
	"  --session ID      only the events of session ID (or of sessions it begins);\n"
	"                    default: every session in the log\n"
	"  --workspace DIR   what ./ stands for; default: the workspace the sessions'\n"
	"                    start events name, else the directory the allowed writes\n"
	"                    share\n"
	"  -o, --output FILE write the policy to FILE (replaced) instead of stdout\n"
	"\n"
	"The kernel layer is never widened: no sandbox.write (or sandbox.read) entry\n"
	"is suggested.  The shim may allow a write outside the workspace that the\n"
	"kernel layer refuses (not in sandbox.write), and the log records it as\n"
	"allowed all the same; its allow rule stays, and a comment lists the\n"
	"directories such writes would need in sandbox.write: adding them is your\n"
	"call, by hand.\n"
	"\n"
	"A line that is not an event is reported on stderr as LOG:LINE: what is wrong,\n"
	"and skipped.  An event decided both ways is denied, with a warning.\n"
	"\n"
	"Last, the policy is checked against the log: each action decided by it as\n"
	"`airlock check` would.  Any action it decides otherwise than the log (two\n"
	"runs args matching cannot tell apart, such as `sh -c 'echo hi'` and\n"
	"`sh '-c echo' hi`; a widened U+FFFD glob) is listed on stderr; the actions\n"
	"kept denied are listed apart and are not counted.\n"
	"\n"
	"Exit status: 0 success: the policy decides every event as the log did\n"
	"(but those kept denied);\n"
	"1 the policy was written but decides some event otherwise (listed on\n"
	"stderr), or the log cannot be read, or FILE cannot be written; 2 usage\n"
	"error, or a log with no usable events.\n";

/* ---- the command line ------------------------------------------------------------- */

struct suggest_args {
	const char *log;
	const char *session;
	const char *workspace;
	const char *output;
};

static int usage_error(const char *fmt, const char *arg)
{
	fputs("airlock: suggest: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n" SUGGEST_SYNOPSIS "See 'airlock suggest --help'.\n", stderr);
	return -1;
}

/* Fills a.  0, 1 when help was printed, -1 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct suggest_args *a)
{
	bool options = true;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int r = 0;
		if (options && strcmp(arg, "--") == 0) {
			options = false;
			continue;
		}
		if (options && airlock_is_help(arg)) {
			fputs(cmd_suggest_usage, stdout);
			return 1;
		}
		if (options && strcmp(arg, "-o") == 0) { /* -o FILE: --output FILE */
			if (i + 1 >= argc)
				return usage_error("%s needs a value", arg);
			a->output = argv[++i];
			continue;
		}
		if (options && arg[0] == '-' && arg[1] != '\0') {
			if ((r = airlock_option_value(argc, argv, &i, "--session", &a->session)) == 0 &&
			    (r = airlock_option_value(argc, argv, &i, "--workspace", &a->workspace)) == 0)
				r = airlock_option_value(argc, argv, &i, "--output", &a->output);
			if (r < 0)
				return usage_error("%s needs a value", arg);
			if (r == 0)
				return usage_error("unknown option: %s", arg);
			continue;
		}
		if (a->log)
			return usage_error("more than one LOG: %s", arg);
		a->log = arg;
	}
	if (!a->log)
		return usage_error("%s", "no LOG to read");
	if (a->session && !a->session[0])
		return usage_error("%s", "--session needs a non-empty ID");
	if (a->output && !a->output[0])
		return usage_error("%s", "--output needs a FILE");
	return 0;
}

/* Writes len bytes of text to path (replaced) or stdout.  Exit status. */
static int write_out(const char *path, const char *text, size_t len)
{
	if (!path) {
		fwrite(text, 1, len, stdout);
		return AIRLOCK_EXIT_OK;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		airlock_err("suggest: cannot write %s: %m", path);
		return AIRLOCK_EXIT_FAILURE;
	}
	fwrite(text, 1, len, f);
	if (ferror(f) | (fclose(f) != 0)) {
		airlock_err("suggest: cannot write %s: %m", path);
		return AIRLOCK_EXIT_FAILURE;
	}
	return AIRLOCK_EXIT_OK;
}

/* ---- the steps ------------------------------------------------------------------- */

/*
 * Reads the log into sg (its name into path), merged, with the home and
 * workspace its patterns are relative to.  -1 when the command goes on,
 * else its exit status (said on stderr).
 */
static int load(struct suggest *sg, const struct suggest_args *a, char *path, size_t cap)
{
	struct logread_filter filter = { .session = a->session };
	sg->log_name = path;
	if (logread_file(a->log, "suggest", &filter, suggest_add_event, sg, path, cap) < 0)
		return AIRLOCK_EXIT_FAILURE;
	if (sg->oom) {
		airlock_err("suggest: out of memory");
		return AIRLOCK_EXIT_FAILURE;
	}
	if (sg->na == 0) {
		airlock_err("suggest: %s: no %sevents to learn from (exec, file or network events)%s",
			    path, a->session ? "matching " : "", a->session ? "; check --session" : "");
		return AIRLOCK_EXIT_USAGE;
	}
	suggest_merge(sg);
	sg->home = policy_source_home();
	if (!sg->home && errno == ENOENT)
		sg->home = strdup("/"); /* no home: no ~/ patterns */
	if (a->workspace && !(sg->workspace = realpath(a->workspace, NULL))) {
		airlock_err("suggest: --workspace %s: %m", a->workspace);
		return AIRLOCK_EXIT_USAGE;
	}
	if (!a->workspace)
		sg->workspace = suggest_find_workspace(sg);
	if (!sg->home) {
		airlock_err("suggest: out of memory");
		return AIRLOCK_EXIT_FAILURE;
	}
	return -1;
}

/* The rules for sg's actions, as policy text into *text (malloc'ed, *len bytes).  Exit status. */
static int policy_text(struct suggest *sg, const char *filter, char **text, size_t *len)
{
	suggest_carry_over(sg); /* first: the rules it leaves out keep the allow rules exact */
	suggest_choose_all(sg);
	FILE *f = open_memstream(text, len);
	if (f && !sg->oom)
		suggest_put_policy(f, sg, filter);
	if (!f || fclose(f) != 0 || sg->oom) {
		airlock_err("suggest: out of memory");
		return AIRLOCK_EXIT_FAILURE;
	}
	return AIRLOCK_EXIT_OK;
}

int cmd_suggest(int argc, char **argv)
{
	struct suggest_args args = { 0 };
	struct suggest sg = { 0 };
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int status = parse_args(argc, argv, &args);
	if (status != 0)
		return status > 0 ? AIRLOCK_EXIT_OK : AIRLOCK_EXIT_USAGE;
	if ((status = load(&sg, &args, path, sizeof path)) < 0 &&
	    (status = policy_text(&sg, args.session, &text, &len)) == AIRLOCK_EXIT_OK) {
		unsigned long bad = suggest_verify(&sg, text, len);
		status = write_out(args.output, text, len);
		if (bad && status == AIRLOCK_EXIT_OK) {
			airlock_err("suggest: the suggested policy decides %lu action%s otherwise than "
				    "the log (above)%s; exit status 1",
				    bad, bad == 1 ? "" : "s", args.output ? ", written all the same" : "");
			status = AIRLOCK_EXIT_FAILURE;
		}
	}
	free(text);
	suggest_free(&sg);
	return status;
}
