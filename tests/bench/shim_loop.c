/* shim_loop.c — workloads for the shim benchmark: an open()+close() loop, a fork+exec loop, the constructor's cost. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Usage: shim_loop open N PATH | exec N | init | image — prints nanoseconds (a loop's total, the shim's constructor, its image mapping). */
int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "open") == 0) {
		long n = atol(argv[2]);
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++) {
			int fd = open(argv[3], O_RDONLY);
			if (fd < 0) {
				perror(argv[3]);
				return 1;
			}
			close(fd);
		}
		printf("%llu\n", (unsigned long long)(now_ns() - t0));
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "exec") == 0) {
		long n = atol(argv[2]);
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++) {
			pid_t pid = fork();
			if (pid == 0) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(127);
			}
			int st;
			if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0) {
				fprintf(stderr, "shim_loop: /bin/true failed\n");
				return 1;
			}
		}
		printf("%llu\n", (unsigned long long)(now_ns() - t0));
		return 0;
	}
	if (argc >= 2 && (strcmp(argv[1], "init") == 0 || strcmp(argv[1], "image") == 0)) {
		const char *sym = argv[1][1] == 'n' ? "airlock_shim_init_ns" : "airlock_shim_image_ns";
		uint64_t (*init_ns)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, sym);
		if (!init_ns) {
			fprintf(stderr, "shim_loop: the shim is not loaded\n");
			return 1;
		}
		printf("%llu\n", (unsigned long long)init_ns());
		return 0;
	}
	fprintf(stderr, "usage: shim_loop open N PATH | exec N | init | image\n");
	return 2;
}
