/* pattern.c — syntax checks for rule patterns, shared by the YAML loader and the compiler. */
#include "policy/pattern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/glob.h"
#include "policy/netaddr.h"
#include "policy/regex.h"

static int fail(char *msg, size_t msglen, const char *fmt, const char *arg)
{
	if (msglen)
		snprintf(msg, msglen, fmt, arg);
	return -EINVAL;
}

static int check_regex(const char *re, char *msg, size_t msglen)
{
	char why[200];
	size_t len;
	int r = regex_compile(re, NULL, 0, &len, why, sizeof why);
	if (r == -E2BIG)
		return fail(msg, msglen, "%s", "regex too large");
	if (r < 0)
		return fail(msg, msglen, "bad regex: %s", why);
	return 0;
}

static int check_glob(const char *g, enum glob_flavour f, char *msg, size_t msglen)
{
	char why[200];
	if (glob_check(g, f, why, sizeof why) < 0)
		return fail(msg, msglen, "bad glob: %s", why);
	return 0;
}

int pattern_check_command(const char *command, enum policy_match m, char *msg, size_t msglen)
{
	if (command[0] == '\0')
		return fail(msg, msglen, "%sempty command", "");
	if (m != POLICY_MATCH_REGEX && strpbrk(command, " \t"))
		return fail(msg, msglen,
			    "command '%s' contains a space: the program goes in 'command', "
			    "its arguments in 'args'",
			    command);
	if (m == POLICY_MATCH_REGEX)
		return check_regex(command, msg, msglen);
	if (m == POLICY_MATCH_GLOB)
		return check_glob(command, GLOB_TEXT, msg, msglen);
	return 0;
}

int pattern_check_args(const char *args, enum policy_match m, char *msg, size_t msglen)
{
	if (m == POLICY_MATCH_REGEX)
		return check_regex(args, msg, msglen);
	if (m == POLICY_MATCH_GLOB)
		return check_glob(args, GLOB_TEXT, msg, msglen);
	return 0;
}

static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2) {
		bool start = p == path || p[-1] == '/';
		bool end = p[2] == '\0' || p[2] == '/';
		if (start && end)
			return true;
	}
	return false;
}

int pattern_check_path(const char *path, enum policy_match m, char *msg, size_t msglen)
{
	if (path[0] == '\0')
		return fail(msg, msglen, "%sempty path", "");
	if (m == POLICY_MATCH_REGEX)
		return check_regex(path, msg, msglen);
	if (path[0] == '~' && path[1] != '\0' && path[1] != '/')
		return fail(msg, msglen, "'%s': only '~/' (your home) is supported, not '~user'",
			    path);
	if (has_dotdot(path))
		return fail(msg, msglen,
			    "'..' in path pattern '%s' never matches: paths are compared canonical",
			    path);
	if (m == POLICY_MATCH_GLOB)
		return check_glob(path, GLOB_PATH, msg, msglen);
	return 0;
}

int pattern_check_destination(const char *destination, enum policy_match m, char *msg,
			      size_t msglen)
{
	struct netdest d;
	return netdest_parse(destination, m, &d, msg, msglen);
}
