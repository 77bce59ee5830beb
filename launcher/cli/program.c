/* program.c — the program execve(2) would run for a command name, as the shim and `run` see it. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/cli/launcher.h"
#include "core/canon.h"

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The directories execvp(3) searches: $PATH, or the system default when unset. */
static char *search_path(void)
{
	const char *env = getenv("PATH");
	if (env)
		return strdup(env);
	size_t n = confstr(_CS_PATH, NULL, 0);
	char *def = n ? malloc(n) : strdup("/usr/bin:/bin");
	if (def && n)
		confstr(_CS_PATH, def, n);
	return def;
}

/* Returns the first dir/cmd in the colon-separated list dirs that is executable, or NULL. */
static char *find_in_path(const char *cmd, const char *dirs)
{
	const char *d = dirs;
	for (;;) {
		size_t n = strcspn(d, ":");
		/* An empty entry means the current directory, as in execvp(3). */
		char *cand = NULL;
		if (asprintf(&cand, "%.*s/%s", n ? (int)n : 1, n ? d : ".", cmd) < 0)
			cand = NULL;
		if (cand && is_executable_file(cand))
			return cand;
		free(cand);
		if (!d[n])
			return NULL;
		d += n + 1;
	}
}

char *canon_program(const char *cmd)
{
	char *found = NULL, cwd[PATH_MAX], out[PATH_MAX];
	if (!strchr(cmd, '/')) {
		char *dirs = search_path();
		if (!dirs)
			return NULL;
		found = find_in_path(cmd, dirs);
		free(dirs);
		if (!found)
			return strdup(cmd);
		cmd = found;
	}
	int r = cmd[0] == '/' || getcwd(cwd, sizeof cwd) ? canon_lexical(cmd[0] == '/' ? NULL : cwd,
									  cmd, out, sizeof out)
							  : -errno;
	free(found);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return strdup(out);
}
