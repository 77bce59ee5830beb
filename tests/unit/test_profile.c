/* test_profile.c — agent profiles (launcher/profiles/profile.c): the table, detection, choice, the merge into a policy, the shim's variables. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include "launcher/profiles/profile.h"

static struct policy *load(const char *text)
{
	struct policy_error err;
	struct policy *p = policy_load_buffer("t.yaml", text, strlen(text), &err);
	assert_non_null(p);
	return p;
}

/* Every profile: a lower-case name, a title, programs, state under ~/, hosts with a port, keys. */
static void test_table(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct profile *const *p = profile_table; *p; p++, n++) {
		const struct profile *pr = *p;
		assert_true(pr->name[0] >= 'a' && pr->name[0] <= 'z');
		assert_ptr_equal(profile_find(pr->name), pr);
		assert_non_null(pr->title);
		assert_non_null(pr->programs[0]);
		for (size_t i = 0; pr->state[i]; i++)
			assert_int_equal(strncmp(pr->state[i], "~/", 2), 0);
		for (size_t i = 0; pr->hosts[i]; i++)
			assert_non_null(strstr(pr->hosts[i], ":443"));
		assert_non_null(pr->keys[0]);
		for (size_t i = 0; i < pr->ncopies; i++) {
			assert_int_equal(strncmp(pr->copies[i].path, "~/", 2), 0);
			assert_true((pr->copies[i].apply == COPY_JSON_KEYS) ==
				    (pr->copies[i].keys != NULL));
		}
	}
	assert_int_equal(n, 4);
	assert_null(profile_find("none"));
	assert_null(profile_find("auto"));
	assert_null(profile_find("Claude"));
}

static void test_detect(void **state)
{
	(void)state;
	char *const node_argv[] = { "node", "--no-warnings", "/x/lib/node_modules/@openai/codex/bin/codex.js",
				    NULL };
	char *const py_argv[] = { "python3", "-c", "print(1)", NULL };
	assert_string_equal(profile_detect("claude", "/usr/bin/claude", NULL, NULL)->name, "claude");
	/* another name, resolved to the package */
	assert_string_equal(profile_detect("cc", "/home/u/bin/cc",
					   "/home/u/n/@anthropic-ai/claude-code/bin/claude.exe", NULL)
				    ->name,
			    "claude");
	/* the native installer: the resolved name is a version */
	assert_string_equal(profile_detect("claude", "/home/u/.local/bin/claude",
					   "/home/u/.local/share/claude/versions/2.1.332", NULL)
				    ->name,
			    "claude");
	assert_string_equal(profile_detect("codex", "/usr/bin/codex", NULL, NULL)->name, "codex");
	assert_string_equal(profile_detect("/usr/bin/gemini", "/usr/bin/gemini", NULL, NULL)->name,
			    "gemini");
	assert_string_equal(profile_detect("aider", "/home/u/.local/bin/aider", NULL, NULL)->name,
			    "aider");
	/* an interpreter: its script */
	assert_string_equal(profile_detect("node", "/usr/bin/node", "/usr/bin/node", node_argv)->name,
			    "codex");
	assert_null(profile_detect("python3", "/usr/bin/python3", "/usr/bin/python3", py_argv));
	assert_null(profile_detect("sh", "/bin/sh", "/usr/bin/dash", NULL));
	assert_null(profile_detect("claudette", "/bin/claudette", NULL, NULL));
}

static void test_choose(void **state)
{
	(void)state;
	struct policy *p = load("version: 1\n");
	struct policy *named = load("version: 1\nprofile: codex\n");
	struct policy *unknown = load("version: 1\nprofile: clod\n");
	struct policy_error err;
	struct profile_choice c;
	char *const argv[] = { "claude", NULL };

	assert_int_equal(profile_choose(NULL, p, "/usr/bin/claude", argv, &c, &err), 0);
	assert_string_equal(c.profile->name, "claude");
	assert_int_equal(c.origin, PROFILE_DETECTED);
	assert_string_equal(c.agent_exes[0], "/usr/bin/claude");
	profile_choice_release(&c);

	/* the option beats the policy, the policy beats detection */
	assert_int_equal(profile_choose("none", named, "/usr/bin/claude", argv, &c, &err), 0);
	assert_null(c.profile);
	assert_int_equal(profile_choose(NULL, named, "/usr/bin/claude", argv, &c, &err), 0);
	assert_string_equal(c.profile->name, "codex");
	assert_int_equal(c.origin, PROFILE_POLICY);
	profile_choice_release(&c);
	assert_int_equal(profile_choose("auto", named, "/usr/bin/claude", argv, &c, &err), 0);
	assert_string_equal(c.profile->name, "claude");
	profile_choice_release(&c);

	/* unknown: the policy's position, or the option */
	assert_int_equal(profile_choose(NULL, unknown, "/bin/sh", NULL, &c, &err), -1);
	assert_string_equal(err.file, "t.yaml");
	assert_int_equal(err.line, 2);
	assert_int_equal(err.column, 10);
	assert_non_null(strstr(err.message, "unknown profile 'clod'"));
	assert_int_equal(profile_choose("gpt", p, "/bin/sh", NULL, &c, &err), -1);
	assert_string_equal(err.file, "--profile");
	policy_free(p);
	policy_free(named);
	policy_free(unknown);
}

static size_t count_reason(const struct policy *p, const char *prefix)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nrules; i++)
		n += p->rules[i].reason && strncmp(p->rules[i].reason, prefix, strlen(prefix)) == 0;
	return n;
}

static bool has(char **list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* The merge: allow rules named by the profile, sandbox.write and passthrough without duplicates; it compiles. */
static void test_apply(void **state)
{
	(void)state;
	struct policy *p = load("version: 1\nsandbox:\n  write: [\"./\", \"~/.claude\"]\n"
				"  env_passthrough: [PATH, ANTHROPIC_API_KEY]\n");
	struct policy_error err;
	struct profile_choice c = { .profile = profile_find("claude"), .origin = PROFILE_OPTION };
	size_t nwrite = p->sandbox.nwrite;
	assert_int_equal(profile_apply(&c, p, &err), 0);
	/* ~/.claude, the API, claude.ai, statsig, the agent-only .credentials.json */
	assert_int_equal(count_reason(p, "profile claude: "), 5);
	assert_int_equal(p->sandbox.nwrite, nwrite);            /* ~/.claude was there */
	assert_true(has(p->sandbox.env_passthrough, p->sandbox.nenv_passthrough, "CLAUDE_CODE_OAUTH_TOKEN"));
	size_t n = 0;
	for (size_t i = 0; i < p->sandbox.nenv_passthrough; i++)
		n += strcmp(p->sandbox.env_passthrough[i], "ANTHROPIC_API_KEY") == 0;
	assert_int_equal(n, 1);
	struct policy_context ctx = { .home = "/home/u", .workspace = "/w" };
	void *img;
	size_t size;
	const struct policy_image *image;
	assert_int_equal(policy_compile(p, &ctx, &img, &size, &err), 0);
	assert_int_equal(policy_image_open(img, size, &image, NULL, 0), 0);
	struct policy_verdict v = policy_decide_open(image, "/home/u/.claude/session-env/x",
						     POLICY_FILE_WRITE);
	assert_int_equal(v.decision, POLICY_ALLOW);
	v = policy_decide_connect(image, "api.anthropic.com", 443);
	assert_int_equal(v.decision, POLICY_ALLOW);
	struct policy_rule_info info;
	assert_int_equal(policy_rule_describe(image, v.rule, &info), 0);
	assert_non_null(strstr(info.reason, "profile claude"));
	/* the agent-only file's rule names the profile: the shim logs it with its refusals */
	v = policy_decide_open(image, "/home/u/.claude/.credentials.json", POLICY_FILE_READ);
	assert_int_equal(v.decision, POLICY_ALLOW);
	assert_int_equal(policy_rule_describe(image, v.rule, &info), 0);
	assert_non_null(strstr(info.reason, "agent's own processes only"));
	free(img);
	policy_free(p);
}

static void test_scrub_env(void **state)
{
	(void)state;
	char *exes[] = { "/a/claude", "/b/with:colon", "/c/claude.exe" };
	struct profile_choice c = { .profile = profile_find("claude"), .agent_exes = exes,
				    .nagent_exes = 3 };
	char *keys, *ex;
	assert_int_equal(profile_scrub_env(&c, &keys, &ex), 0);
	assert_string_equal(keys,
			    "AIRLOCK_AGENT_KEYS=ANTHROPIC_API_KEY:ANTHROPIC_AUTH_TOKEN:CLAUDE_CODE_OAUTH_TOKEN");
	assert_string_equal(ex, "AIRLOCK_AGENT_EXE=/a/claude:/c/claude.exe");
	free(keys);
	free(ex);
	struct profile_choice none = { 0 };
	assert_int_equal(profile_scrub_env(&none, &keys, &ex), 0);
	assert_null(keys);
	assert_null(ex);
}

static void test_mkdirs(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_profile.XXXXXX", path[PATH_MAX], failed[PATH_MAX];
	struct stat st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/a/b/c", dir);
	assert_int_equal(profile_mkdirs(path, failed, sizeof failed), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(profile_mkdirs(path, failed, sizeof failed), 0); /* exists: fine */
	snprintf(path, sizeof path, "%s/a/b/c/file", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof path, "%s/a/b/c/file/below", dir);
	assert_int_equal(profile_mkdirs(path, failed, sizeof failed), -ENOTDIR);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),	    cmocka_unit_test(test_detect),
		cmocka_unit_test(test_choose),	    cmocka_unit_test(test_apply),
		cmocka_unit_test(test_scrub_env), cmocka_unit_test(test_mkdirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
