/*
 * loader.h — the dynamic loader run as a program: "ld-linux-x86-64.so.2
 * [OPTIONS] PROGRAM ARGS" starts PROGRAM (ld.so(8)).  Shared by the shim
 * (which decides PROGRAM) and the launcher (which decides a shim's report
 * of it again).  Header-only: the shim compiles it with hidden symbols.
 */
#ifndef AIRLOCK_LOADER_H
#define AIRLOCK_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Whether path (any form) names the dynamic loader, by its file name. */
static inline bool loader_is(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld64.so", 7) == 0 ||
	       strcmp(base, "ld.so") == 0;
}

/*
 * Index in argv (NULL-terminated, argv[0] the loader) of the program ld.so
 * will run, skipping its options (ld.so(8): those taking an argument skip
 * it too); 0 when there is none.
 */
static inline size_t loader_program(const char *const argv[])
{
	static const char *const with_arg[] = { "--library-path", "--inhibit-rpath", "--audit",
						"--preload", "--argv0", "--glibc-hwcaps-prepend",
						"--glibc-hwcaps-mask", NULL };
	for (size_t i = 1; argv[i]; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			return i;
		if (strcmp(argv[i], "--") == 0)
			return argv[i + 1] ? i + 1 : 0;
		for (size_t k = 0; with_arg[k]; k++)
			if (strcmp(argv[i], with_arg[k]) == 0 && argv[i + 1])
				i++;
	}
	return 0;
}

#endif
