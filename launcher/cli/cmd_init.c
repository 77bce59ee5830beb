/* cmd_init.c — `airlock init`: writes the built-in default policy to .airlock/policy.yaml. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/cli/launcher.h"

#define INIT_DIR ".airlock"
#define INIT_FILE INIT_DIR "/policy.yaml"
#define INIT_TEMP INIT_DIR "/.policy.yaml.XXXXXX"

const char cmd_init_usage[] =
	"usage: airlock init [--force]\n"
	"\n"
	"Writes airlock's built-in default policy to .airlock/policy.yaml in the\n"
	"current directory (creating .airlock/), for you to edit.  airlock commands\n"
	"started in this directory use it from then on.\n"
	"\n"
	"  --force   overwrite an existing .airlock/policy.yaml\n"
	"\n"
	"Exit status: 0 written; 1 the file exists (without --force) or cannot be\n"
	"written; 2 usage error.\n";

static int parse_args(int argc, char **argv, bool *force)
{
	*force = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0 || strcmp(argv[i], "-f") == 0) {
			*force = true;
		} else {
			airlock_err("init: unexpected argument: %s", argv[i]);
			fputs(cmd_init_usage, stderr);
			return -1;
		}
	}
	return 0;
}

/* Creates .airlock/ (0755) unless it is already a directory.  Returns 0 or -errno. */
static int make_dir(void)
{
	if (mkdir(INIT_DIR, 0755) == 0)
		return chmod(INIT_DIR, 0755) < 0 ? -errno : 0;
	if (errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(INIT_DIR, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the policy text to a new temporary file (0644) in .airlock/; its name goes to tmp. */
static int write_temp(char *tmp, const char *text, size_t len)
{
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	int r = fchmod(fd, 0644) < 0 ? -errno : write_all(fd, text, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/*
 * Moves the complete temporary file into place, so no reader ever sees half a
 * policy: rename(2) replaces (--force), link(2) refuses an existing file.
 */
static int install(const char *tmp, bool force)
{
	int r = 0;
	if (force)
		r = rename(tmp, INIT_FILE) < 0 ? -errno : 0;
	else
		r = link(tmp, INIT_FILE) < 0 ? -errno : 0;
	if (r < 0 || !force)
		unlink(tmp);
	return r;
}

int cmd_init(int argc, char **argv)
{
	bool force;
	if (parse_args(argc, argv, &force) < 0)
		return AIRLOCK_EXIT_USAGE;
	size_t len;
	const char *text = policy_default_text(&len);
	int r = make_dir();
	if (r < 0) {
		airlock_err("init: cannot create %s/: %s", INIT_DIR, strerror(-r));
		return AIRLOCK_EXIT_FAILURE;
	}
	char tmp[] = INIT_TEMP;
	r = write_temp(tmp, text, len);
	if (r == 0)
		r = install(tmp, force);
	if (r == -EEXIST) {
		airlock_err("init: %s already exists; use --force to overwrite it", INIT_FILE);
		return AIRLOCK_EXIT_FAILURE;
	}
	if (r < 0) {
		airlock_err("init: cannot write %s: %s", INIT_FILE, strerror(-r));
		return AIRLOCK_EXIT_FAILURE;
	}
	printf("wrote %s (the default policy, %zu bytes)\n"
	       "edit it, then check it with: airlock check --policy %s\n",
	       INIT_FILE, len, INIT_FILE);
	return AIRLOCK_EXIT_OK;
}
