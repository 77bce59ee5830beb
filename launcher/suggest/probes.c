/* probes.c — what a carried-over deny rule that `airlock suggest` leaves out denies, made concrete: actions no other allow or ask rule may cover. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "launcher/suggest/suggest.h"

/*
 * Glob g made concrete, malloc'ed: each "**" + "/" as dir, each other run of
 * '*' as fill, '?' as 'x', "\c" as c; NULL when it holds a bracket
 * expression (or out of memory).
 */
static char *concrete(const char *g, const char *fill, const char *dir)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok = f != NULL;
	if (!f)
		return NULL;
	for (const char *p = g; *p && ok; p++) {
		if (p[0] == '*' && p[1] == '*' && p[2] == '/') {
			fputs(dir, f);
			p += 2;
		} else if (*p == '*') {
			while (p[1] == '*')
				p++;
			fputs(fill, f);
		} else if (*p == '?')
			fputc('x', f);
		else if (*p == '[')
			ok = false;
		else if (*p == '\\' && p[1])
			fputc(*++p, f);
		else
			fputc(*p, f);
	}
	if (fclose(f) != 0 || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Takes probe a (its fields owned) into c when c's rule denies it; frees it otherwise. */
static void add_probe(struct suggest *sg, struct carried *c, struct action *a)
{
	if (!sg->oom && suggest_decide(c->img, a).rule == 0) {
		struct action *p = grow_array(c->probe, &c->probe_cap, c->nprobe + 1, sizeof *p, 8);
		if (p) {
			c->probe = p;
			c->probe[c->nprobe++] = *a;
			return;
		}
		sg->oom = true;
	}
	suggest_action_free(a);
}

/* A probe running program name (a name without '/' is in /usr/bin) with args split at each space. */
static void exec_probe(struct suggest *sg, struct carried *c, const char *name, const char *args)
{
	struct action a = { .kind = K_EXEC, .rule = -1 };
	a.program = strchr(name, '/') ? strdup(name) : suggest_format("/usr/bin/%s", name);
	a.args = calloc(strlen(args) + 2, sizeof *a.args);
	if (!a.program || !a.args) {
		sg->oom = true;
		suggest_action_free(&a);
		return;
	}
	for (const char *w = args; *args;) { /* no arguments when args is empty */
		size_t n = strcspn(w, " ");
		if (!(a.args[a.nargs++] = strndup(w, n))) {
			sg->oom = true;
			suggest_action_free(&a);
			return;
		}
		if (!w[n])
			break;
		w += n + 1;
	}
	const char *slash = strrchr(a.program, '/');
	a.base = slash && slash[1] ? (char *)slash + 1 : a.program;
	add_probe(sg, c, &a);
}

/* Probes opening path (malloc'ed, taken; NULL: out of memory) and a name below it, for each action. */
static void file_probe(struct suggest *sg, struct carried *c, char *path, unsigned actions)
{
	for (int below = 0; below < 2 && path; below++)
		for (unsigned bit = POLICY_FILE_READ; bit <= POLICY_FILE_EXEC; bit <<= 1) {
			if (!(actions & bit))
				continue;
			struct action a = { .kind = K_FILE, .rule = -1, .faction = bit };
			a.path = below ? suggest_format("%s%sprobe", path, strcmp(path, "/") ? "/" : "")
				       : strdup(path);
			if (!a.path) {
				sg->oom = true;
				break;
			}
			add_probe(sg, c, &a);
		}
	sg->oom |= !path;
	free(path);
}

/* A connection probe to host (its "/bits" dropped) on port (none, "*": 443 and 1). */
static void net_probe(struct suggest *sg, struct carried *c, const char *host, size_t hlen,
		      const char *port)
{
	unsigned ports[2] = { 443, 1 };
	size_t np = 2;
	if (port && *port && strcmp(port, "*") != 0) {
		ports[0] = (unsigned)strtoul(port, NULL, 10);
		np = ports[0] >= 1 && ports[0] <= 65535;
	}
	const char *cut = memchr(host, '/', hlen);
	if (cut)
		hlen = (size_t)(cut - host);
	for (size_t i = 0; i < np && hlen; i++) {
		struct action a = { .kind = K_NET, .rule = -1, .port = ports[i] };
		if (!(a.host = strndup(host, hlen))) {
			sg->oom = true;
			return;
		}
		add_probe(sg, c, &a);
	}
}

/* Command rule r's probes: its program and arguments made concrete, three ways each. */
static void command_probes(struct suggest *sg, struct carried *c, const struct policy_rule *r,
			   bool glob)
{
	static const char *const fill[3] = { "", "etc", "x /" };
	for (int i = 0; i < 2 && !sg->oom; i++) {
		char *name = glob ? concrete(r->command, i ? "x" : "", "") : strdup(r->command);
		for (int j = 0; j < 3 && name && !sg->oom; j++) {
			char *args = !r->args ? strdup(j == 0 ? "" : j == 1 ? "-rf /" : "x")
				     : glob ? concrete(r->args, fill[j], fill[j])
				     : r->match == POLICY_MATCH_PREFIX && j == 1
					     ? suggest_format("%s x", r->args)
					     : strdup(r->args);
			if (args)
				exec_probe(sg, c, name, args);
			free(args);
		}
		free(name);
	}
}

/* File rule r's probes: its path made concrete three ways, under the directory it is relative to. */
static void file_probes(struct suggest *sg, struct carried *c, const struct policy_rule *r,
			bool glob)
{
	static const char *const fill[3] = { "", "etc", "x /" }, *const dir[3] = { "", "x/", "x/y/" };
	const char *ws = sg->workspace ? sg->workspace : "/";
	for (int i = 0; i < 3 && !sg->oom; i++) {
		char *s = glob ? concrete(r->path, i ? fill[i] : "x", dir[i]) : strdup(r->path);
		size_t n = s ? strlen(s) : 0;
		while (n > 1 && s[n - 1] == '/')
			s[--n] = '\0';
		if (!s)
			continue;
		if (strcmp(s, "~") == 0 || strncmp(s, "~/", 2) == 0)
			file_probe(sg, c, s[1] ? suggest_join(sg->home, s + 2) : strdup(sg->home), r->actions);
		else if (strcmp(s, ".") == 0 || strncmp(s, "./", 2) == 0)
			file_probe(sg, c, s[1] ? suggest_join(ws, s + 2) : strdup(ws), r->actions);
		else if (s[0] == '/')
			file_probe(sg, c, strdup(s), r->actions);
		else if (strchr(s, '/'))
			file_probe(sg, c, suggest_join(ws, s), r->actions);
		else if (s[0]) { /* a name in any directory */
			file_probe(sg, c, suggest_join(ws, s), r->actions);
			file_probe(sg, c, suggest_join(sg->home, s), r->actions);
			file_probe(sg, c, suggest_join("/tmp", s), r->actions);
		}
		free(s);
	}
}

/* Network rule r's probes: its destination made concrete, host and port apart. */
static void network_probes(struct suggest *sg, struct carried *c, const struct policy_rule *r,
			   bool glob)
{
	char *s = glob ? concrete(r->destination, "probe", "") : strdup(r->destination);
	if (!s) {
		sg->oom |= !glob;
		return;
	}
	const char *close = s[0] == '[' ? strchr(s, ']') : NULL, *colon = strchr(s, ':');
	if (close)
		net_probe(sg, c, s + 1, (size_t)(close - s - 1), close[1] == ':' ? close + 2 : NULL);
	else if (colon && strchr(colon + 1, ':')) /* a bare IPv6 address or range */
		net_probe(sg, c, s, strlen(s), NULL);
	else
		net_probe(sg, c, s, colon ? (size_t)(colon - s) : strlen(s), colon ? colon + 1 : NULL);
	free(s);
}

/* A regex names no concrete action: the log's actions it denies guard it. */
void suggest_make_probes(struct suggest *sg, struct carried *c, const struct policy_rule *r)
{
	bool glob = r->match == POLICY_MATCH_GLOB;
	if (r->match == POLICY_MATCH_REGEX)
		return;
	if (r->kind == POLICY_RULE_COMMAND)
		command_probes(sg, c, r, glob);
	else if (r->kind == POLICY_RULE_FILE)
		file_probes(sg, c, r, glob);
	else
		network_probes(sg, c, r, glob);
}
