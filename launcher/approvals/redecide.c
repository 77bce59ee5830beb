/* redecide.c — the launcher's own decision of the action a shim's report names (see redecide.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/canon.h"
#include "core/loader.h"
#include "launcher/approvals/redecide.h"

/*
 * Paths a shim reports are canonical: absolute, no "." / ".." / "//"
 * components, no trailing "/", and not through /proc/PID/{root,cwd} (the
 * canonicaliser resolves those).  The one exception is text decided when
 * canonicalising failed: an fd that is no file (/proc/self/fd/N of a pipe).
 */
static bool all_digits(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s);
}

static bool shim_path(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; *c == '/' && c[1];) {
		const char *start = c + 1, *end = strchrnul(start, '/');
		size_t len = (size_t)(end - start);
		if (len == 0 || (len == 1 && start[0] == '.') ||
		    (len == 2 && start[0] == '.' && start[1] == '.') || (!*end && end[-1] == '/'))
			return false;
		c = end;
	}
	if (p[1] && p[strlen(p) - 1] == '/')
		return false;
	if (strncmp(p, "/dev/fd/", 8) == 0)
		return all_digits(p + 8);
	if (strncmp(p, "/proc/self/", 11) == 0)
		return strncmp(p + 11, "fd/", 3) == 0 && all_digits(p + 14);
	if (strncmp(p, "/proc/thread-self/", 18) == 0)
		return strncmp(p + 18, "fd/", 3) == 0 && all_digits(p + 21);
	if (strncmp(p, "/proc/", 6) == 0 && p[6] >= '0' && p[6] <= '9') {
		const char *rest = p + 6 + strspn(p + 6, "0123456789");
		return !(strcmp(rest, "/root") == 0 || strncmp(rest, "/root/", 6) == 0 ||
			 strcmp(rest, "/cwd") == 0 || strncmp(rest, "/cwd/", 5) == 0);
	}
	return true;
}

/* An exec decided on program and on its host and lexical canonical forms, the stricter. */
static struct policy_verdict decide_program(const struct policy_image *img, const char *program,
					    const char *const *argv)
{
	struct policy_verdict v = policy_decide_exec(img, program, argv);
	char lex[4096], *real = realpath(program, NULL);
	if (real && strcmp(real, program) != 0)
		v = policy_verdict_stricter(v, policy_decide_exec(img, real, argv));
	if (canon_lexical("/", program, lex, sizeof lex) >= 0 && strcmp(lex, program) != 0)
		v = policy_verdict_stricter(v, policy_decide_exec(img, lex, argv));
	/* the dynamic loader as a program: the shim decides the program it runs */
	size_t i;
	if (argv[0] && (loader_is(program) || (real && loader_is(real))) &&
	    (i = loader_program(argv)) > 0)
		v = policy_verdict_stricter(v, decide_program(img, argv[i], argv + i));
	free(real);
	return v;
}

struct policy_verdict redecide_report(const struct policy_image *img, const struct channel_msg *m,
				     const char **why)
{
	static const struct policy_verdict bad = { POLICY_DENY, -1 };
	*why = NULL;
	switch (m->source) {
	case CHANNEL_SOURCE_EXEC: {
		if (m->program[0] != '/') {
			*why = "a program path no shim reports (relative)";
			return bad;
		}
		const char **argv = calloc((size_t)m->argc + 1, sizeof *argv);
		if (!argv) {
			*why = "out of memory";
			return bad;
		}
		size_t n = 0;
		struct channel_args it;
		const char *arg;
		channel_args_begin(m, &it);
		while (n < m->argc && (arg = channel_args_next(&it, NULL)))
			argv[n++] = arg;
		struct policy_verdict v = decide_program(img, m->program, argv);
		free(argv);
		return v;
	}
	case CHANNEL_SOURCE_OPEN:
		if (!shim_path(m->path)) {
			*why = "a path no shim reports (not canonical)";
			return bad;
		}
		return policy_decide_open(img, m->path, m->action);
	default:
		return policy_decide_connect(img, m->host, m->port);
	}
}
