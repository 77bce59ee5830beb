/* program.c — the program execve(2) would run for a command name, as the shim and `run` see it. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/cli/launcher.h"
#include "core/canon.h"
#include "core/pathsearch.h"

char *canon_program(const char *cmd)
{
	char found[PATH_MAX], cwd[PATH_MAX], out[PATH_MAX];
	if (!strchr(cmd, '/')) {
		/* the shim's search for execvp(3) and posix_spawnp(3), so both find the same program */
		if (path_search(cmd, getenv("PATH"), found, sizeof found) < 0)
			return strdup(cmd);
		cmd = found;
	}
	int r = cmd[0] == '/' || getcwd(cwd, sizeof cwd) ? canon_lexical(cmd[0] == '/' ? NULL : cwd,
									  cmd, out, sizeof out)
							  : -errno;
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return strdup(out);
}
