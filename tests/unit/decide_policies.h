/* decide_policies.h — the policies test_decide.c and test_describe.c decide on and describe, compiled once per test program. */
#ifndef AIRLOCK_TEST_DECIDE_POLICIES_H
#define AIRLOCK_TEST_DECIDE_POLICIES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifndef AGENTGUARD_FILE
#define AGENTGUARD_FILE "tests/data/policies/agentguard.yaml"
/* A verdict is decision d (ALLOW, ASK, DENY) by rule r (-1: the default). */
#define assert_verdict(v, d, r)                          \
	do {                                             \
		struct policy_verdict v_ = (v);          \
		assert_int_equal(v_.decision, POLICY_##d); \
		assert_int_equal(v_.rule, (r));          \
	} while (0)

#endif

/* ---- Policies ---------------------------------------------------------------- */

enum {
	AG,     /* AgentGuard's example: the fixture AGENTGUARD_FILE */
	PREC,   /* precedence across and within lists */
	DDENY,  /* default: deny */
	DMAP,   /* default as a partial map */
	DALLOW, /* default: allow */
	ACT,    /* per-action defaults and file actions */
	EXECF,  /* file rules with action exec deciding execs */
	CMD,    /* command rules: every match mode */
	FILES,  /* file rules: every pattern form and match mode */
	NET,    /* network rules: every destination form */
	NETANY, /* "*" and "*:22" */
	DESC,   /* rules with reasons and match modes, for policy_rule_describe */
	GEN,    /* 2000 generated rules */
	NPOL
};

static const char *const policy_yaml[NPOL] = {
	[PREC] = "version: 1\n"
		 "allow:\n"
		 "  - command: git\n"                                /* 0 */
		 "  - command: git\n"                                /* 1 */
		 "    args: status\n"
		 "  - file: {path: \"/data/**\"}\n"                  /* 2 */
		 "  - network: {destination: \"*.corp.com\"}\n"      /* 3 */
		 "  - command: make\n"                               /* 4 */
		 "ask:\n"
		 "  - command: git\n"                                /* 5 */
		 "    args: \"push *\"\n"
		 "  - file: {path: \"/data/secret/**\"}\n"           /* 6 */
		 "  - network: {destination: \"build.corp.com:22\"}\n" /* 7 */
		 "  - command: \"*\"\n"                              /* 8 */
		 "    args: \"--danger*\"\n"
		 "deny:\n"
		 "  - command: git\n"                                /* 9 */
		 "    args: \"push --force*\"\n"
		 "  - command: git\n"                                /* 10 */
		 "    args: \"push --force origin*\"\n"
		 "  - file: {path: \"/data/secret/keys/**\"}\n"      /* 11 */
		 "  - network: {destination: \"*.corp.com:23\"}\n"   /* 12 */
		 "  - command: make\n"                               /* 13 */
		 "    args: \"*clean*\"\n",
	[DDENY] = "version: 1\n"
		  "default: deny\n"
		  "ask_timeout: 15\n"
		  "allow:\n"
		  "  - command: ls\n"                                   /* 0 */
		  "  - file: {path: \"/w/**\", action: write}\n"        /* 1 */
		  "  - network: {destination: \"ok.com\"}\n",           /* 2 */
	[DMAP] = "version: 1\n"
		 "default:\n"
		 "  read: deny\n"
		 "  connect: allow\n"
		 "deny:\n"
		 "  - network: {destination: \"bad.com\"}\n"          /* 0 */
		 "allow:\n"
		 "  - file: {path: \"~/ok\", action: read}\n",        /* 1 */
	[DALLOW] = "version: 1\n"
		   "default: allow\n"
		   "deny:\n"
		   "  - command: rm\n"                                /* 0 */
		   "ask:\n"
		   "  - file: {path: \"/etc/**\", action: write}\n",  /* 1 */
	[ACT] = "version: 1\n"
		"default: {exec: deny, read: ask, write: allow, connect: deny}\n"
		"ask:\n"
		"  - file: {path: /w, action: write}\n"               /* 0 */
		"allow:\n"
		"  - file: {path: /r, action: read}\n"                /* 1 */
		"  - file: {path: /x, action: exec}\n",               /* 2 */
	[EXECF] = "version: 1\n"
		  "default: ask\n"
		  "ask_timeout: 300\n"
		  "allow:\n"
		  "  - command: tool\n"                                  /* 0 */
		  "  - file: {path: \"/usr/bin/**\", action: exec}\n"    /* 1 */
		  "ask:\n"
		  "  - file: {path: \"/usr/local/**\", action: exec}\n"  /* 2 */
		  "deny:\n"
		  "  - file: {path: \"/opt/t/**\", action: exec}\n"      /* 3 */
		  "  - file: {path: /usr/bin/nc, action: exec}\n"        /* 4 */
		  "  - file: {path: \"*.sh\", action: exec}\n",          /* 5 */
	[CMD] = "version: 1\n"
		"deny:\n"
		"  - command: rm\n"                          /* 0 */
		"    args: \"-rf /\"\n"
		"    match: exact\n"
		"  - command: npm\n"                         /* 1 */
		"    args: run\n"
		"    match: prefix\n"
		"  - command: /usr/bin/python3\n"            /* 2 */
		"    args: \"-c *\"\n"
		"  - command: \"py[0-9]\"\n"                 /* 3 */
		"  - command: \"cur?\"\n"                    /* 4 */
		"  - command: tool\n"                        /* 5 */
		"    args: \"(start|stop) [a-z]+\"\n"
		"    match: regex\n"
		"  - command: \"x[!a]z\"\n"                  /* 6 */
		"  - command: \"n[[:digit:]]\"\n"            /* 7 */
		"  - command: lit\n"                         /* 8 */
		"    args: 'a\\*b'\n"
		"  - command: \"/opt/bin/*\"\n"              /* 9 */
		"    args: \"--evil\"\n"
		"  - command: \"ru.y\"\n"                    /* 10 */
		"    match: regex\n"
		"  - command: gcc\n"                         /* 11 */
		"    args: \"-o out\"\n"
		"    match: prefix\n"
		"  - command: npx\n"                         /* 12 */
		"    match: prefix\n"
		"  - command: \"/usr/s?bin/ip(6)?tables\"\n" /* 13 */
		"    match: regex\n"
		"  - command: cp\n"                          /* 14 */
		"    args: \"?? *\"\n"
		"  - command: \"ex*\"\n"                     /* 15 */
		"    match: exact\n"
		"  - command: tar\n"                         /* 16 */
		"    args: \"-?x.*\"\n"
		"    match: regex\n",
	[FILES] = "version: 1\n"
		  "deny:\n"
		  "  - file: {path: .env}\n"                                        /* 0 */
		  "  - file: {path: \"~/.ssh\"}\n"                                  /* 1 */
		  "  - file: {path: /tmp/a}\n"                                      /* 2 */
		  "  - file: {path: \"src/*.c\", action: write}\n"                  /* 3 */
		  "  - file: {path: \"./build/**\", action: write}\n"               /* 4 */
		  "  - file: {path: \"/srv/a/**/b\", action: read}\n"               /* 5 */
		  "  - file: {path: \"/var/log/*.log\", action: read}\n"            /* 6 */
		  "  - file: {path: \"/etc/passw?\", action: read}\n"               /* 7 */
		  "  - file: {path: \"/opt/evil/**\", action: exec}\n"              /* 8 */
		  "  - file: {path: \"*.key\", action: [read, write]}\n"            /* 9 */
		  "  - file: {path: /cfg/, action: write}\n"                        /* 10 */
		  "  - file: {path: \"/data/f[0-9].txt\", action: read}\n"          /* 11 */
		  "  - file: {path: /exact/dir, action: read, match: exact}\n"      /* 12 */
		  "  - file: {path: /pfx/dir, action: read}\n"                      /* 13 */
		  "    match: prefix\n"
		  "  - file: {path: '/rx/[a-z]+\\.db', action: read, match: regex}\n" /* 14 */
		  "  - file: {path: \"~/secrets/**\", action: read}\n"              /* 15 */
		  "  - file: {path: \"~/.bashrc\", action: write, match: exact}\n"  /* 16 */
		  "  - file: {path: ./vendor, action: write, match: prefix}\n"      /* 17 */
		  "  - file: {path: \"~/x.*\", action: read, match: regex}\n"       /* 18 */
		  "  - file: {path: \"**/cache/*.tmp\", action: write}\n"           /* 19 */
		  "  - file: {path: \"id_[!r]*\", action: read}\n",                 /* 20 */
	[NET] = "version: 1\n"
		"deny:\n"
		"  - network: {destination: \"evil.com\"}\n"                        /* 0 */
		"  - network: {destination: \"*.tracker.net\"}\n"                   /* 1 */
		"  - network: {destination: \"10.0.0.0/8\"}\n"                      /* 2 */
		"  - network: {destination: \"[2001:db8::]/32\"}\n"                 /* 3 */
		"  - network: {destination: \"[::1]:8080\"}\n"                      /* 4 */
		"  - network: {destination: \"192.168.1.1:22\"}\n"                  /* 5 */
		"  - network: {destination: \"api-?.example.org\"}\n"               /* 6 */
		"  - network: {destination: \"fd00::/8\"}\n"                        /* 7 */
		"  - network: {destination: \"Mixed.Case.ORG.:443\"}\n"             /* 8 */
		"  - network: {destination: \"*:25\"}\n"                            /* 9 */
		"  - network: {destination: \"127.0.0.1\"}\n"                       /* 10 */
		"ask:\n"
		"  - network: {destination: \"*.example.com:443\"}\n"               /* 11 */
		"allow:\n"
		"  - network: {destination: \"example.com:443\"}\n"                 /* 12 */
		"  - network: {destination: \"*:443\"}\n"                           /* 13 */
		"  - network: {destination: \"1*\"}\n"                              /* 14 */
		"  - network: {destination: \"exact.host:80\", match: exact}\n",    /* 15 */
	[NETANY] = "version: 1\n"
		   "deny:\n"
		   "  - network: {destination: \"*:22\"}\n"   /* 0 */
		   "allow:\n"
		   "  - network: {destination: \"*\"}\n",     /* 1 */
	[DESC] = "version: 1\n"
		 "deny:\n"
		 "  - command: npm\n"                                              /* 0, line 3 */
		 "    args: run\n"
		 "    match: prefix\n"
		 "    reason: no scripts\n"
		 "ask:\n"
		 "  - file:\n"                                                     /* 1, line 8 */
		 "      path: \"~/.aws/**\"\n"
		 "      action: [read, write]\n"
		 "      reason: cloud creds\n"
		 "allow:\n"
		 "  - network: {destination: \"[::1]:8080\", match: exact}\n"      /* 2, line 13 */
		 "  - file: {path: '/x/[a-z]+', action: exec, match: regex}\n"     /* 3, line 14 */
		 "  - command: /usr/bin/env\n",                                    /* 4, line 15 */
};

/* GEN: allow 0..999 alternate command tool<i/2> and write under /gen/d<i/2>; ask 1000..1499
 * h<k>.example.net:443; deny 1500..1999 alternate tool<2k> "--rm*" and write under /gen/d<k>/secret. */
#define GEN_RULES 2000

static inline char *gen_yaml(void)
{
	size_t cap = 256 * 1024, len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
#define ADD(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__), assert_true(len < cap))
	ADD("version: 1\nallow:\n");
	for (int i = 0; i < 1000; i++) {
		if (i % 2 == 0)
			ADD("  - command: tool%d\n", i / 2);
		else
			ADD("  - file: {path: \"/gen/d%d/**\", action: write}\n", i / 2);
	}
	ADD("ask:\n");
	for (int k = 0; k < 500; k++)
		ADD("  - network: {destination: \"h%d.example.net:443\"}\n", k);
	ADD("deny:\n");
	for (int k = 0; k < 250; k++) {
		ADD("  - command: tool%d\n    args: \"--rm*\"\n", 2 * k);
		ADD("  - file: {path: \"/gen/d%d/secret/**\", action: write}\n", k);
	}
#undef ADD
	return s;
}

static struct test_policy pols[NPOL];
static bool built[NPOL];
static const char *ag_source;

static inline void build_agentguard(struct test_policy *t)
{
	struct policy_error err;
	struct policy_context ctx = { TEST_HOME, TEST_WORKSPACE };
	char msg[2048];

	memset(t, 0, sizeof *t);
	/* the one copy of the fixture (tests/cli/run.sh uses it too): missing is a failure */
	t->p = policy_load_file(AGENTGUARD_FILE, &err);
	if (!t->p) {
		policy_error_format(&err, msg, sizeof msg);
		fail_msg("the AgentGuard fixture does not load (run from the repository root): %s",
			 msg);
	}
	ag_source = AGENTGUARD_FILE;
	if (policy_compile(t->p, &ctx, &t->blob, &t->size, &err) != 0) {
		policy_error_format(&err, msg, sizeof msg);
		fail_msg("compile: %s", msg);
	}
	if (policy_image_open(t->blob, t->size, &t->img, msg, sizeof msg) != 0)
		fail_msg("image: %s", msg);
}

static inline const struct policy_image *image(int i)
{
	if (!built[i]) {
		if (i == AG) {
			build_agentguard(&pols[i]);
		} else if (i == GEN) {
			char *y = gen_yaml();
			test_policy_build(&pols[i], y);
			free(y);
		} else {
			test_policy_build(&pols[i], policy_yaml[i]);
		}
		built[i] = true;
	}
	return pols[i].img;
}

static inline int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NPOL; i++)
		test_policy_free(&pols[i]);
	memset(built, 0, sizeof built);
	return 0;
}

/* A verdict is decision d (ALLOW, ASK, DENY) by rule r (-1: the default). */
#define assert_verdict(v, d, r)                          \
	do {                                             \
		struct policy_verdict v_ = (v);          \
		assert_int_equal(v_.decision, POLICY_##d); \
		assert_int_equal(v_.rule, (r));          \
	} while (0)

#endif
