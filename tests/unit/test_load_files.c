/* test_load_files.c — unit tests for the YAML policy loader (policy/load.c): files (missing, directories, devices, size limits), buffers, and a policy of ten thousand rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"

#define V "version: 1\n"

/* ---- Files and buffers ----------------------------------------------------------- */

/* Writes size bytes (header, then '#' comment padding) to a new temp file. */
static void make_file(char *path, size_t pathlen, const char *header, size_t size)
{
	size_t hlen = strlen(header);
	char *buf = malloc(size);
	int fd;

	snprintf(path, pathlen, "/tmp/test_load_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_non_null(buf);
	assert_true(size >= hlen + 2);
	memcpy(buf, header, hlen);
	buf[hlen] = '#';
	memset(buf + hlen + 1, 'x', size - hlen - 2);
	buf[size - 1] = '\n';
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
}

static void test_load_file_missing(void **state)
{
	struct policy_error err;

	(void)state;
	assert_null(policy_load_file("/nonexistent/airlock/policy.yaml", &err));
	assert_string_equal(err.file, "/nonexistent/airlock/policy.yaml");
	assert_int_equal(err.line, 0);
	assert_int_equal(err.column, 0);
	assert_non_null(strstr(err.message, "cannot open the policy"));
	assert_non_null(strstr(err.message, strerror(ENOENT)));
}

static void test_load_file_directory(void **state)
{
	struct policy_error err;

	(void)state;
	assert_null(policy_load_file("/tmp", &err));
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.message, "not a regular file (a directory)"));
}

static void test_load_file_valid(void **state)
{
	struct policy_error err;
	char path[64];
	struct policy *p;

	(void)state;
	make_file(path, sizeof(path), V "deny:\n  - command: rm\n", 64);
	p = policy_load_file(path, &err);
	assert_non_null(p);
	assert_string_equal(p->source, path);
	assert_int_equal(p->nrules, 1);
	policy_free(p);
	unlink(path);
}

static void test_load_file_errors_name_the_file(void **state)
{
	struct policy_error err;
	char path[64], rendered[2048], expect[256];

	(void)state;
	make_file(path, sizeof(path), V "bogus: 1\n", 32);
	assert_null(policy_load_file(path, &err));
	policy_error_format(&err, rendered, sizeof(rendered));
	snprintf(expect, sizeof(expect), "%s:2:1: unknown key 'bogus'", path);
	assert_memory_equal(rendered, expect, strlen(expect));
	unlink(path);
}

static void test_load_file_limit(void **state)
{
	struct policy_error err;
	char path[64];
	struct policy *p;

	(void)state;
	make_file(path, sizeof(path), V, POLICY_MAX_FILE_SIZE);
	p = policy_load_file(path, &err);
	assert_non_null(p);
	policy_free(p);
	unlink(path);

	make_file(path, sizeof(path), V, POLICY_MAX_FILE_SIZE + 1);
	assert_null(policy_load_file(path, &err));
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.message, "larger than 1048576 bytes"));
	unlink(path);
}

static void test_load_file_huge_sparse(void **state)
{
	struct policy_error err;
	char path[] = "/tmp/test_load_XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)8 << 30), 0);
	close(fd);
	assert_null(policy_load_file(path, &err));
	assert_non_null(strstr(err.message, "larger than 1048576 bytes"));
	unlink(path);
}

static void test_load_file_device(void **state)
{
	struct policy_error err;
	struct policy *p;

	(void)state;
	/* a device is refused unread: /dev/zero would never end, /dev/tty would wait */
	p = policy_load_file("/dev/null", &err);
	assert_null(p);
	assert_non_null(strstr(err.message, "not a regular file (a character device)"));
}

static void test_buffer_too_large(void **state)
{
	size_t len = POLICY_MAX_FILE_SIZE + 1;
	char *buf = malloc(len);
	struct policy_error err;

	(void)state;
	assert_non_null(buf);
	memset(buf, '#', len);
	memcpy(buf, V, strlen(V));
	assert_null(policy_load_buffer("big.yaml", buf, len, &err));
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.message, "larger than 1048576 bytes"));
	free(buf);
}

static void test_buffer_not_nul_terminated(void **state)
{
	static const char text[] = "version: 1\ndeny: [{command: rm}]\nthis is not YAML: [";
	struct policy_error err;
	struct policy *p;

	(void)state;
	p = policy_load_buffer("slice.yaml", text, strlen("version: 1\ndeny: [{command: rm}]\n"), &err);
	assert_non_null(p);
	assert_int_equal(p->nrules, 1);
	assert_string_equal(p->source, "slice.yaml");
	policy_free(p);
}

static void test_free_null(void **state)
{
	(void)state;
	policy_free(NULL);
}

/* ---- Scale ------------------------------------------------------------------------ */

static void test_ten_thousand_rules(void **state)
{
	static const char *const list_keys[] = {"deny", "ask", "allow"};
	const size_t nrules = 10000, cap = 900 * 1024;
	char *buf = malloc(cap);
	struct policy_error err;
	size_t len = 0;
	struct policy *p;

	(void)state;
	assert_non_null(buf);
	len += (size_t)snprintf(buf + len, cap - len, "version: 1\n");
	for (size_t i = 0; i < nrules; i++) {
		if (i % 4000 == 0)
			len += (size_t)snprintf(buf + len, cap - len, "%s:\n", list_keys[i / 4000]);
		switch (i % 3) {
		case 0:
			len += (size_t)snprintf(buf + len, cap - len,
						"  - command: tool%zu\n    args: \"--x %zu *\"\n", i, i);
			break;
		case 1:
			len += (size_t)snprintf(buf + len, cap - len,
						"  - file: {path: /data/%zu/**, action: [read, write]}\n", i);
			break;
		default:
			len += (size_t)snprintf(buf + len, cap - len,
						"  - network: {destination: \"h%zu.example.com:443\"}\n", i);
		}
		assert_true(len < cap);
	}
	p = policy_load_buffer("big.yaml", buf, len, &err);
	if (!p)
		print_error("%s:%u:%u: %s\n", err.file, err.line, err.column, err.message);
	assert_non_null(p);
	assert_int_equal(p->nrules, nrules);
	for (size_t i = 0; i < nrules; i++) {
		assert_int_equal(p->rules[i].kind, (enum policy_rule_kind)(i % 3));
		assert_int_equal(p->rules[i].list, (enum policy_list)(i / 4000));
	}
	assert_string_equal(p->rules[9999].command, "tool9999");
	assert_string_equal(p->rules[9999].args, "--x 9999 *");
	assert_string_equal(p->rules[9998].destination, "h9998.example.com:443");
	assert_int_equal(p->rules[9997].actions, POLICY_FILE_READ | POLICY_FILE_WRITE);
	policy_free(p);
	free(buf);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_file_missing),
		cmocka_unit_test(test_load_file_directory),
		cmocka_unit_test(test_load_file_valid),
		cmocka_unit_test(test_load_file_errors_name_the_file),
		cmocka_unit_test(test_load_file_limit),
		cmocka_unit_test(test_load_file_huge_sparse),
		cmocka_unit_test(test_load_file_device),
		cmocka_unit_test(test_buffer_too_large),
		cmocka_unit_test(test_buffer_not_nul_terminated),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_ten_thousand_rules),
	};
	return cmocka_run_group_tests_name("files and buffers", tests, NULL, NULL);
}
