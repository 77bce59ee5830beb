/* canon_bench.c — median cost of canon_path() hot (cached), cold (uncached) and on new names, against realpath(3) and an open()+close(). */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"
#include "core/canon.h"

#define BATCHES 21
#define HOT_ROUNDS 20000
#define COLD_ROUNDS 500
#define NEW_NAMES 4096

/* Spellings a program really uses: absolute, relative, "./", "..", through a symlinked directory. */
static const char *const paths[] = {
	"src/module/file.c",
	"./src/module/file.h",
	"src/module/../module/file.c",
	"link/module/file.c",
	"build/obj/file.o",
	"src/module/sub/deep/leaf.txt",
	"", /* absolute: filled in with the tree's path */
	"",
};
#define NPATHS (sizeof paths / sizeof paths[0])

static char root[PATH_MAX];
static char abs_paths[2][PATH_MAX + 64];

static const char *path_at(size_t i)
{
	return i < NPATHS - 2 ? paths[i] : abs_paths[i - (NPATHS - 2)];
}

static void touch(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	close(fd);
}

static void make_tree(void)
{
	char tmpl[] = "/tmp/canon_bench.XXXXXX";
	if (!mkdtemp(tmpl) || !realpath(tmpl, root) || chdir(root) != 0) {
		perror("canon_bench: temporary tree");
		exit(1);
	}
	canon_invalidate();
	const char *dirs[] = { "src", "src/module", "src/module/sub", "src/module/sub/deep", "build", "build/obj" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		mkdir(dirs[i], 0700);
	touch("src/module/file.c");
	touch("src/module/file.h");
	touch("src/module/sub/deep/leaf.txt");
	touch("build/obj/file.o");
	if (symlink("src", "link") != 0) {
		perror("symlink");
		exit(1);
	}
	snprintf(abs_paths[0], sizeof abs_paths[0], "%s/src/module/file.c", root);
	snprintf(abs_paths[1], sizeof abs_paths[1], "%s/link/module/sub/deep/leaf.txt", root);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

/* ns per call of canon_path over the path set, rounds times each, with flags. */
static double time_canon(unsigned flags, int rounds)
{
	char out[PATH_MAX];
	double t0 = now_ns();
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < NPATHS; i++)
			if (canon_path(AT_FDCWD, path_at(i), flags, out, sizeof out) < 0)
				abort();
	return (now_ns() - t0) / ((double)rounds * NPATHS);
}

static double time_realpath(int rounds)
{
	char out[PATH_MAX];
	double t0 = now_ns();
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < NPATHS; i++)
			if (!realpath(path_at(i), out))
				abort();
	return (now_ns() - t0) / ((double)rounds * NPATHS);
}

/* A new name each call in a directory already cached: one readlinkat(2). */
static double time_new_names(int batch)
{
	char in[64], out[PATH_MAX];
	double t0 = now_ns();
	for (int i = 0; i < NEW_NAMES; i++) {
		snprintf(in, sizeof in, "src/module/new%d_%d.tmp", batch, i);
		if (canon_path(AT_FDCWD, in, 0, out, sizeof out) < 0)
			abort();
	}
	return (now_ns() - t0) / NEW_NAMES;
}

/* The cost canon_path adds to: one open()+close() of an allowed path. */
static double time_open_close(int rounds)
{
	double t0 = now_ns();
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < NPATHS; i++) {
			int fd = open(path_at(i), O_RDONLY);
			if (fd < 0)
				abort();
			close(fd);
		}
	return (now_ns() - t0) / ((double)rounds * NPATHS);
}

int main(void)
{
	double hot[BATCHES], cold[BATCHES], rp[BATCHES], fresh[BATCHES], oc[BATCHES];
	make_tree();
	time_canon(0, 1000); /* warm the caches */
	for (int b = 0; b < BATCHES; b++) {
		hot[b] = time_canon(0, HOT_ROUNDS);
		cold[b] = time_canon(CANON_NOCACHE, COLD_ROUNDS);
		rp[b] = time_realpath(COLD_ROUNDS);
		fresh[b] = time_new_names(b);
		oc[b] = time_open_close(COLD_ROUNDS);
	}
	double h = median(hot, BATCHES), c = median(cold, BATCHES), r = median(rp, BATCHES);
	double o = median(oc, BATCHES);
	printf("bench: shim.canon.hot %.1f ns\n", h);
	printf("bench: shim.canon.cold %.0f ns\n", c);
	printf("bench: shim.canon.newname %.0f ns\n", median(fresh, BATCHES));
	printf("bench: shim.canon.realpath %.0f ns\n", r);
	printf("bench: shim.canon.vs_realpath %.3f x\n", h / r);
	printf("bench: shim.canon.open_close %.0f ns\n", o);
	printf("bench: shim.canon.open_share %.3f x\n", (o + h) / o);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
