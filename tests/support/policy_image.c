/* policy_image.c — test helper: compiles a YAML policy into the policy.img file the shim maps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"

/* Usage: policy_image POLICY.yaml OUT.img HOME WORKSPACE — exit 0, or 2 with the policy error. */
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
	free(image);
	policy_free(p);
	return 0;
}
