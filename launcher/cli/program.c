/* program.c — the program execve(2) would run for a command name, as the shim and `run` see it. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/launcher.h"
#include "core/pathsearch.h"

char *canon_program(const char *cmd)
{
	char out[PATH_MAX];
	/* the shim's search for execvp(3) and posix_spawnp(3), so both find the same program */
	int r = path_program(cmd, getenv("PATH"), out, sizeof out);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return strdup(out);
}
