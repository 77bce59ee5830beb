/* open_loop.c — what one open costs inside a sandbox: `open_loop DIR N REPEAT` opens and closes
 * DIR/f0 .. DIR/f(N-1) once each (first opens: the open gate decides each, open_gate.h), then
 * DIR/f0 REPEAT times (repeated opens: its ignore mark answers), through raw syscalls so no shim
 * hook is in the way.  Prints "first NS_PER_OPEN" and "repeat NS_PER_OPEN" (ns, wall clock).
 * Built by tests/bench/gate_bench.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int open_close(const char *path)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	syscall(SYS_close, fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long n = atol(argv[2]), repeat = atol(argv[3]);
	char path[4096];
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/f%ld", argv[1], i);
		if (open_close(path) < 0) {
			perror(path);
			return 1;
		}
	}
	double t1 = now_ns();
	snprintf(path, sizeof path, "%s/f0", argv[1]);
	for (long i = 0; i < repeat; i++)
		if (open_close(path) < 0)
			return 1;
	double t2 = now_ns();
	printf("first %.0f\nrepeat %.0f\n", (t1 - t0) / n, (t2 - t1) / repeat);
	return 0;
}
