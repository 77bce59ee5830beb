/* cmd_compile.c — `airlock compile`: the policy's compiled image in a file, for the shim's tripwire mode. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/cli/launcher.h"
#include "launcher/profiles/profile.h"

#define COMPILE_SYNOPSIS                                                                      \
	"usage: airlock compile [--workspace DIR] [--profile NAME] [FILE] -o IMAGE\n"

const char cmd_compile_usage[] =
	COMPILE_SYNOPSIS
	"\n"
	"Loads the policy FILE as `airlock run` and `airlock check` do, and writes its\n"
	"compiled image to IMAGE (the bytes a session's policy.img holds): atomically\n"
	"(a temporary file renamed over IMAGE) and read-only (mode 0444).  The image\n"
	"is what the preload shim reads in its tripwire mode:\n"
	"\n"
	"    LD_PRELOAD=/path/airlock-preload.so AIRLOCK_IMAGE=IMAGE AIRLOCK_LOG=LOG CMD\n"
	"\n"
	"\"~/\" and \"./\" in the policy are fixed at compile time: the home directory\n"
	"($HOME) and the workspace of this command.\n"
	"\n"
	"  FILE                the policy; without it the first of\n"
	"                      ./.airlock/policy.yaml (in the workspace),\n"
	"                      $XDG_CONFIG_HOME/airlock/policy.yaml and the built-in\n"
	"                      default policy\n"
	"  -o, --output IMAGE  where to write the image (required)\n"
	"  --workspace DIR     the directory \"./\" patterns mean (default: the current\n"
	"                      directory)\n"
	"  --profile NAME      an agent profile merged into the policy (claude, codex,\n"
	"                      gemini, aider, none; default: the policy's profile: key)\n"
	"\n"
	"Prints \"IMAGE: N rules, B bytes (policy FILE, workspace DIR)\".\n"
	"Exit status: 0 written; 2 usage error or a policy that does not load (printed\n"
	"as file:line:column: message); 1 the image could not be written.\n";

struct compile_args {
	struct policy_source_options source;
	const char *output;
	const char *profile;
	struct profile_choice choice;
};

static int usage_error(const char *what, const char *arg)
{
	airlock_err("compile: %s%s", what, arg ? arg : "");
	fputs(COMPILE_SYNOPSIS "See 'airlock compile --help'.\n", stderr);
	return -1;
}

/* Parses the command line; 0, 1 (help printed) or -1 (usage error said). */
static int parse(int argc, char **argv, struct compile_args *a)
{
	bool words_only = false;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		int r = 0;
		if (!words_only && argv[i][0] == '-' && argv[i][1]) {
			if (strcmp(argv[i], "--") == 0) {
				words_only = true;
				continue;
			}
			if (airlock_is_help(argv[i])) {
				fputs(cmd_compile_usage, stdout);
				return 1;
			}
			if ((r = airlock_option_value(argc, argv, &i, "-o", &v)) == 0)
				r = airlock_option_value(argc, argv, &i, "--output", &v);
			if (r > 0) {
				a->output = v;
				continue;
			}
			if (r == 0 && (r = airlock_option_value(argc, argv, &i, "--workspace", &v)) > 0) {
				a->source.workspace = v;
				continue;
			}
			if (r == 0 && (r = airlock_option_value(argc, argv, &i, "--profile", &v)) > 0) {
				a->profile = v;
				continue;
			}
			if (r < 0)
				return usage_error("an option needs a value: ", argv[i]);
			return usage_error("unknown option: ", argv[i]);
		}
		if (a->source.policy_path)
			return usage_error("one policy FILE only, got another: ", argv[i]);
		a->source.policy_path = argv[i];
	}
	if (!a->output || !a->output[0])
		return usage_error("-o IMAGE is required", NULL);
	return 0;
}

/* Between load and compile: the profile chosen and merged in, as `run` does. */
static int amend_policy(struct policy *p, void *arg, struct policy_error *err)
{
	struct compile_args *a = arg;
	if (profile_choose(a->profile, p, NULL, NULL, &a->choice, err) < 0)
		return -1;
	return profile_apply(&a->choice, p, err) < 0 ? -1 : 0;
}

/* Writes size bytes to fd; 0 or -errno. */
static int write_all(int fd, const unsigned char *p, size_t size)
{
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/*
 * Writes the image to path atomically: a temporary file beside it (mkstemp),
 * written, made 0444 and fsync'ed, then renamed over path (rename(2) is
 * atomic: readers see the old image or the new one, never a part).
 * 0 or -errno, with what failed in *what.
 */
static int write_image(const char *path, const void *image, size_t size, const char **what)
{
	char *tmp = NULL;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	int fd = mkstemp(tmp);
	int r = 0;
	*what = "create a temporary file beside";
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	*what = "write";
	r = write_all(fd, image, size);
	if (r == 0 && fchmod(fd, 0444) != 0)
		r = -errno;
	if (r == 0 && fsync(fd) != 0)
		r = -errno;
	if (close(fd) != 0 && r == 0)
		r = -errno;
	if (r == 0) {
		*what = "rename the temporary file over";
		if (rename(tmp, path) != 0)
			r = -errno;
	}
	if (r != 0)
		unlink(tmp);
	free(tmp);
	return r;
}

int cmd_compile(int argc, char **argv)
{
	struct compile_args a = { 0 };
	int p = parse(argc, argv, &a);
	if (p != 0)
		return p > 0 ? AIRLOCK_EXIT_OK : AIRLOCK_EXIT_USAGE;
	a.source.amend = amend_policy;
	a.source.amend_arg = &a;
	struct policy_source src;
	struct policy_error err;
	enum policy_source_status st = policy_source_open(&a.source, &src, &err);
	if (st != POLICY_SOURCE_OK) {
		profile_choice_release(&a.choice);
		return policy_source_report(st, &err);
	}
	const char *what = "write";
	int r = write_image(a.output, src.image, src.image_size, &what);
	int status = AIRLOCK_EXIT_OK;
	if (r < 0) {
		airlock_err("compile: cannot %s %s: %s", what, a.output, strerror(-r));
		status = AIRLOCK_EXIT_FAILURE;
	} else {
		uint32_t n = policy_image_rule_count(src.img);
		printf("%s: %u rule%s, %zu bytes (policy %s, workspace %s)\n", a.output, n,
		       n == 1 ? "" : "s", src.image_size, src.name, src.workspace);
	}
	policy_source_release(&src);
	profile_choice_release(&a.choice);
	return status;
}
