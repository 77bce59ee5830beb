/* policy_image.c — test helper: compiles a YAML policy into the policy.img file the shim maps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buildid.h"
#include "policy/policy.h"

/*
 * Usage: policy_image POLICY.yaml OUT.img HOME WORKSPACE — exit 0, or 2 with the policy error.
 * Also writes, next to OUT.img, the session's table of ruled programs' build-ids
 * (core/buildid.h, "programs") as `airlock run` does, resolved along $PATH.
 */
int main(int argc, char **argv)
{
	struct policy_error err;
	char msg[2048];
	if (argc != 5) {
		fprintf(stderr, "usage: policy_image POLICY.yaml OUT.img HOME WORKSPACE\n");
		return 2;
	}
	struct policy *p = policy_load_file(argv[1], &err);
	struct policy_context ctx = { argv[3], argv[4] };
	void *image = NULL;
	size_t size = 0;
	if (!p || policy_compile(p, &ctx, &image, &size, &err) != 0) {
		policy_error_format(&err, msg, sizeof msg);
		fprintf(stderr, "%s\n", msg);
		return 2;
	}
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0 || write(fd, image, size) != (ssize_t)size || close(fd) != 0) {
		fprintf(stderr, "policy_image: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	const struct policy_image *img;
	char *table = NULL, tpath[4096];
	size_t tlen = 0;
	const char *slash = strrchr(argv[2], '/');
	int dl = slash ? (int)(slash - argv[2]) : 1;
	snprintf(tpath, sizeof tpath, "%.*s/%s", dl, slash ? argv[2] : ".", BUILDID_TABLE_NAME);
	unlink(tpath);
	if (policy_image_open(image, size, &img, msg, sizeof msg) != 0 ||
	    buildid_table_build(img, getenv("PATH"), &table, &tlen) != 0 ||
	    (fd = open(tpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444)) < 0 ||
	    write(fd, table, tlen) != (ssize_t)tlen || close(fd) != 0) {
		fprintf(stderr, "policy_image: %s: cannot write the table\n", tpath);
		return 1;
	}
	free(table);
	free(image);
	policy_free(p);
	return 0;
}
