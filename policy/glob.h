/* glob.h — glob(7) matching for policy rules: text globs (commands, args, hosts) and gitignore-style path globs. */
#ifndef AIRLOCK_POLICY_GLOB_H
#define AIRLOCK_POLICY_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Two flavours share one syntax (glob(7) and gitignore(5)): '*', '?',
 * bracket expressions "[a-z]", "[!x]" / "[^x]" with POSIX classes such as
 * "[[:digit:]]", and '\' quoting the next character.
 *
 * GLOB_TEXT: '*' matches any run of characters, spaces and '/' included;
 *   '?' and brackets match any one character.  Used for command names,
 *   joined arguments and host names.
 * GLOB_PATH: the pattern is an absolute path.  '*', '?' and brackets never
 *   match '/'; "**" must be a whole component: a "**" component followed
 *   by more matches zero or more directories, a "**" last component
 *   everything below (not the directory itself).  A pattern that matches a leading part of the path ending at a
 *   '/' matches the whole path (gitignore: a matched directory covers its
 *   contents; fnmatch(3) FNM_LEADING_DIR).
 */
/* Most runs of '*' one pattern may hold: bounds matching's recursion depth. */
#define GLOB_MAX_STARS 64

enum glob_flavour {
	GLOB_TEXT = 0,
	GLOB_PATH = 1,
};

/*
 * Checks the NUL-terminated pattern for flavour f.  Returns 0, or -EINVAL
 * with a message in msg (msglen bytes): unterminated '[', reversed range,
 * unknown character class, trailing '\', '**' not a whole component (path),
 * more than two '*' in a row (path), more than GLOB_MAX_STARS runs of '*'.
 */
int glob_check(const char *pattern, enum glob_flavour f, char *msg, size_t msglen);

/*
 * True when text (len bytes, need not be NUL-terminated) matches the
 * NUL-terminated pattern, which should have passed glob_check() for f; a
 * pattern that did not is still matched safely (never read past its NUL),
 * so an image need not re-check its globs when it is opened.
 * No allocation; recursion depth is bounded by the number of '*' in the
 * pattern; time is polynomial (no exponential backtracking).
 */
bool glob_match(const char *pattern, const char *text, size_t len, enum glob_flavour f);

/* Length of the leading part of pattern that holds no special character ('*', '?', '[', '\'). */
size_t glob_literal_prefix(const char *pattern);

/* True when the NUL-terminated pattern holds no special character. */
bool glob_is_literal(const char *pattern);

#endif
