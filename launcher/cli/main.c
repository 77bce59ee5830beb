/* main.c — the `airlock` command: dispatches to a subcommand from one table, prints help and version. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "launcher/cli/launcher.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char help_usage[] = "usage: airlock help [COMMAND]\n"
				 "\n"
				 "Prints the list of commands, or the help of COMMAND.\n";

static const char version_usage[] = "usage: airlock version\n"
				    "\n"
				    "Prints airlock's version (also: airlock --version).\n";

static const struct airlock_command commands[] = {
	{ "run", cmd_run, "run an agent in the sandbox, deciding and logging what it does",
	  cmd_run_usage },
	{ "init", cmd_init, "write the default policy to .airlock/policy.yaml", cmd_init_usage },
	{ "check", cmd_check, "decide one action against the policy, or validate a policy",
	  cmd_check_usage },
	{ "compile", cmd_compile, "write the policy's compiled image, for the shim's tripwire mode",
	  cmd_compile_usage },
	{ "log", cmd_log, "print the audit log, filtered, or follow it", cmd_log_usage },
	{ "suggest", cmd_suggest, "turn an audit log into a policy", cmd_suggest_usage },
	{ "attach", cmd_attach, "open the approval TUI on a running session", cmd_attach_usage },
	{ "ps", cmd_ps, "list the running sessions", cmd_ps_usage },
	{ "serve", cmd_serve, "hold a session without a sandbox that process trees join (the shim)",
	  cmd_serve_usage },
	{ "env", cmd_env, "print the variables that join a process tree to `airlock serve`",
	  cmd_env_usage },
	{ "diff", cmd_diff, "show what a session changed in its workspace (its checkpoint)",
	  cmd_diff_usage },
	{ "undo", cmd_undo, "put the workspace back as it was when a session started",
	  cmd_undo_usage },
	{ "doctor", cmd_doctor, "report which sandbox layers this machine gives airlock run",
	  cmd_doctor_usage },
	{ "help", cmd_help, "show help for airlock or one command", help_usage },
	{ "version", cmd_version, "print the version", version_usage },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void airlock_err(const char *fmt, ...)
{
	va_list ap;
	fputs("airlock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int airlock_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int airlock_option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*value = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

static const struct airlock_command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_usage(FILE *f)
{
	fputs("usage: airlock COMMAND [ARG...]\n"
	      "\n"
	      "Runs AI agents under a policy: each program they start, file they open and\n"
	      "connection they make is allowed, denied or asked about.\n"
	      "\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "Options: -h, --help (also after a command), --version.\n"
	      "See 'airlock COMMAND --help' for one command's options and exit statuses.\n",
	      f);
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stdout);
		return AIRLOCK_EXIT_OK;
	}
	const struct airlock_command *c = find_command(argv[1]);
	if (!c || argc > 2) {
		if (!c)
			airlock_err("help: no such command: %s", argv[1]);
		fputs(help_usage, stderr);
		return AIRLOCK_EXIT_USAGE;
	}
	fputs(c->usage, stdout);
	return AIRLOCK_EXIT_OK;
}

static int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fputs(version_usage, stderr);
		return AIRLOCK_EXIT_USAGE;
	}
	puts("airlock " AIRLOCK_VERSION);
	return AIRLOCK_EXIT_OK;
}

/* Flushes stdout and turns a write error (a full disk, a closed pipe) into a failure. */
static int finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		airlock_err("cannot write the output: %m");
		return status == AIRLOCK_EXIT_OK ? AIRLOCK_EXIT_FAILURE : status;
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stderr);
		return AIRLOCK_EXIT_USAGE;
	}
	if (airlock_is_help(argv[1]))
		return finish(cmd_help(1, argv + 1));
	if (strcmp(argv[1], "--version") == 0)
		return finish(cmd_version(1, argv + 1));
	const struct airlock_command *c = find_command(argv[1]);
	if (!c) {
		airlock_err("unknown command: %s", argv[1]);
		print_usage(stderr);
		return AIRLOCK_EXIT_USAGE;
	}
	if (argc > 2 && airlock_is_help(argv[2])) {
		fputs(c->usage, stdout);
		return finish(AIRLOCK_EXIT_OK);
	}
	return finish(c->run(argc - 1, argv + 1));
}
