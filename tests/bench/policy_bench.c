/* policy_bench.c — median cost of policy decisions and compilation at 10..10000 rules, against an fnmatch(3) scan. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"
#include "policy/policy.h"

#define BATCHES 15
#define HOME "/home/bench"
#define WORKSPACE "/home/bench/project"

struct text {
	char *s; /* owned */
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = t->cap ? t->cap * 2 : 65536;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			abort();
	}
}

/*
 * A synthetic policy of n rules shaped like real ones: for each i, one of
 * a command rule (literal program, args glob; one in 20 a wildcard program),
 * a file rule (directory tree under home or workspace, extension anywhere,
 * name anywhere, one in 20 an unindexable "**" + "/cache*" form) or a network
 * rule (host:port, "*.domain", CIDR), spread over deny, ask and allow.
 */
static char *make_policy(unsigned n, size_t *len)
{
	static const char *lists[] = { "deny", "ask", "allow" };
	struct text t = { 0 };
	put(&t, "version: 1\ndefault: {exec: ask, read: allow, write: ask, connect: ask}\n");
	for (unsigned l = 0; l < 3; l++) {
		put(&t, "%s:\n", lists[l]);
		for (unsigned i = l; i < n; i += 3) {
			switch (i % 5) {
			case 0:
			case 1:
				if (i % 20 == 0)
					put(&t, "  - command: \"tool%u*\"\n    args: \"run *\"\n", i);
				else
					put(&t, "  - command: \"cmd%u\"\n    args: \"sub%u *\"\n", i, i);
				break;
			case 2:
				switch ((i / 5) % 4) {
				case 0:
					put(&t, "  - file:\n      path: \"~/dir%u/**\"\n      action: read\n", i);
					break;
				case 1:
					put(&t, "  - file:\n      path: \"*.ext%u\"\n      action: [read, write]\n", i);
					break;
				case 2:
					put(&t, "  - file:\n      path: \"name%u\"\n", i);
					break;
				default:
					if (i % 20 == 17)
						put(&t, "  - file:\n      path: \"/srv/**/cache%u*\"\n", i);
					else
						put(&t, "  - file:\n      path: \"./src%u/*.c\"\n      action: write\n", i);
				}
				break;
			default:
				switch (i % 3) {
				case 0:
					put(&t, "  - network:\n      destination: \"host%u.example.com:443\"\n", i);
					break;
				case 1:
					put(&t, "  - network:\n      destination: \"*.dom%u.net\"\n", i);
					break;
				default:
					put(&t, "  - network:\n      destination: \"10.%u.%u.0/24:%u\"\n",
					    (i / 256) % 256, i % 256, 1000 + i % 5000);
				}
			}
		}
	}
	*len = t.len;
	return t.s;
}

static const char *open_inputs[] = {
	WORKSPACE "/src/main.c",
	WORKSPACE "/src12/util.c",
	HOME "/dir7/notes/todo.txt",
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/etc/ld.so.cache",
	WORKSPACE "/build/obj/name22/x.o",
	"/tmp/data/file.ext12",
	"/srv/www/site/cache17/index.html",
};
#define NOPEN (sizeof open_inputs / sizeof open_inputs[0])

static const char *const exec_inputs[][4] = {
	{ "/usr/bin/cmd1", "cmd1", "sub1 --all", NULL },
	{ "/usr/bin/git", "git", "status", NULL },
	{ "/usr/local/bin/cmd46", "cmd46", "other thing", NULL },
	{ "/usr/bin/python3", "python3", "-m pytest -q tests/unit", NULL },
	{ "/opt/tool40x", "tool40x", "run fast", NULL },
	{ "/bin/sh", "sh", "-c make -j2", NULL },
};
#define NEXEC (sizeof exec_inputs / sizeof exec_inputs[0])

static const struct {
	const char *host;
	unsigned port;
} connect_inputs[] = {
	{ "host3.example.com", 443 }, { "api.anthropic.com", 443 }, { "a.b.dom4.net", 80 },
	{ "10.0.14.7", 1014 },        { "192.168.1.1", 22 },        { "pypi.org", 443 },
};
#define NCONNECT (sizeof connect_inputs / sizeof connect_inputs[0])

static volatile unsigned sink;

static double bench_open(const struct policy_image *img, unsigned reps)
{
	double v[BATCHES];
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (unsigned r = 0; r < reps; r++)
			for (size_t i = 0; i < NOPEN; i++)
				sink += policy_decide_open(img, open_inputs[i], POLICY_FILE_READ).decision;
		v[b] = (now_ns() - t0) / (reps * NOPEN);
	}
	return median(v, BATCHES);
}

static double bench_exec(const struct policy_image *img, unsigned reps)
{
	double v[BATCHES];
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (unsigned r = 0; r < reps; r++)
			for (size_t i = 0; i < NEXEC; i++) {
				const char *argv[] = { exec_inputs[i][1], exec_inputs[i][2], NULL };
				sink += policy_decide_exec(img, exec_inputs[i][0], argv).decision;
			}
		v[b] = (now_ns() - t0) / (reps * NEXEC);
	}
	return median(v, BATCHES);
}

static double bench_connect(const struct policy_image *img, unsigned reps)
{
	double v[BATCHES];
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (unsigned r = 0; r < reps; r++)
			for (size_t i = 0; i < NCONNECT; i++)
				sink += policy_decide_connect(img, connect_inputs[i].host,
							      connect_inputs[i].port)
						.decision;
		v[b] = (now_ns() - t0) / (reps * NCONNECT);
	}
	return median(v, BATCHES);
}

/* Baseline: what an unindexed engine does per open — fnmatch(3) over every file rule. */
static double bench_open_scan(const struct policy *p, unsigned reps)
{
	double v[BATCHES];
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (unsigned r = 0; r < reps; r++)
			for (size_t i = 0; i < NOPEN; i++)
				for (size_t k = 0; k < p->nrules; k++)
					if (p->rules[k].kind == POLICY_RULE_FILE)
						sink += fnmatch(p->rules[k].path, open_inputs[i],
								FNM_PATHNAME | FNM_LEADING_DIR) == 0;
		v[b] = (now_ns() - t0) / (reps * NOPEN);
	}
	return median(v, BATCHES);
}

static void run(unsigned n)
{
	size_t len;
	char *yaml = make_policy(n, &len);
	struct policy_error err;
	char msg[2048];
	double t0 = now_ns();
	struct policy *p = policy_load_buffer("bench.yaml", yaml, len, &err);
	double load_ms = (now_ns() - t0) / 1e6;
	if (!p) {
		policy_error_format(&err, msg, sizeof msg);
		fprintf(stderr, "policy_bench: %s\n", msg);
		exit(1);
	}
	struct policy_context ctx = { HOME, WORKSPACE };
	void *image = NULL;
	size_t size = 0;
	double c[5];
	for (int k = 0; k < 5; k++) {
		free(image);
		t0 = now_ns();
		if (policy_compile(p, &ctx, &image, &size, &err) != 0) {
			policy_error_format(&err, msg, sizeof msg);
			fprintf(stderr, "policy_bench: %s\n", msg);
			exit(1);
		}
		c[k] = (now_ns() - t0) / 1e6;
	}
	const struct policy_image *img;
	if (policy_image_open(image, size, &img, msg, sizeof msg) != 0) {
		fprintf(stderr, "policy_bench: %s\n", msg);
		exit(1);
	}
	t0 = now_ns();
	for (int k = 0; k < 100; k++)
		policy_image_open(image, size, &img, NULL, 0);
	double open_us = (now_ns() - t0) / 100 / 1e3;

	unsigned reps = n >= 10000 ? 2000 : 20000;
	double o = bench_open(img, reps), e = bench_exec(img, reps), k = bench_connect(img, reps);
	double scan = bench_open_scan(p, n >= 1000 ? 20 : 2000);
	printf("bench: policy.decide.open.%urules %.0f ns\n", n, o);
	printf("bench: policy.decide.exec.%urules %.0f ns\n", n, e);
	printf("bench: policy.decide.connect.%urules %.0f ns\n", n, k);
	printf("bench: policy.compile.%urules %.2f ms\n", n, median(c, 5));
	printf("bench: policy.load.%urules %.2f ms\n", n, load_ms);
	printf("bench: policy.image_open.%urules %.1f us\n", n, open_us);
	printf("bench: policy.image_size.%urules %zu bytes\n", n, size);
	printf("bench: policy.decide.open.%urules.vs_fnmatch_scan %.4f x\n", n, o / scan);
	free(image);
	policy_free(p);
	free(yaml);
}

int main(void)
{
	static const unsigned sizes[] = { 10, 100, 1000, 10000 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		run(sizes[i]);
	return 0;
}
