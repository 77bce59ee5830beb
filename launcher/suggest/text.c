/* text.c — `airlock suggest`'s text: YAML scalars, formatted strings, what an action did, in words. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/termtext.h"
#include "launcher/suggest/suggest.h"

char *suggest_format(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

/* s as a YAML double-quoted scalar. */
void suggest_put_yaml(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* s as a malloc'ed YAML double-quoted scalar, or NULL. */
char *suggest_yaml_quoted(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	suggest_put_yaml(f, s);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The first n arguments of a joined by single spaces, written to f. */
void suggest_put_args(FILE *f, const struct action *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(' ', f);
		fputs(a->args[i], f);
	}
}

/* What an action did: "exec PROGRAM ARGS", "write PATH", "connect HOST:PORT"; malloc'ed, or NULL. */
char *suggest_example_text(const struct action *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *g = open_memstream(&buf, &len);
	if (!g)
		return NULL;
	if (a->kind == K_EXEC) {
		fputs("exec ", g);
		termtext_put_word(g, a->program);
		for (size_t i = 0; i < a->nargs; i++) {
			fputc(' ', g);
			termtext_put_word(g, a->args[i]);
		}
	} else if (a->kind == K_FILE) {
		fprintf(g, "%s ", policy_file_action_name(a->faction));
		termtext_put_word(g, a->path);
	} else {
		fprintf(g, strchr(a->host, ':') ? "connect [%s]:%u" : "connect %s:%u", a->host, a->port);
	}
	if (fclose(g) == 0)
		return buf;
	free(buf);
	return NULL;
}

/* dir + "/" + rest, malloc'ed (dir "/" gives "/rest"). */
char *suggest_join(const char *dir, const char *rest)
{
	return suggest_format("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, rest);
}
