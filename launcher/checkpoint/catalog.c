/* catalog.c — the user's checkpoints (catalog.h): list, find, forget, prune. */
#include "launcher/checkpoint/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/termtext.h"

bool ckpt_is_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n == CKPT_ID_LEN && s[n] == '\0';
}

/* st_blocks * 512 of everything under dirfd (not following symlinks). */
static unsigned long long tree_bytes(int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return 0;
	}
	unsigned long long sum = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sum += (unsigned long long)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode) && depth < 4) {
			int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				sum += tree_bytes(fd, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

static int by_started(const void *x, const void *y)
{
	const struct ckpt_info *a = x, *b = y;
	if (a->started != b->started)
		return a->started < b->started ? 1 : -1;
	return strcmp(a->id, b->id);
}

void ckpt_list_free(struct ckpt_info *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].workspace);
		free(v[i].command);
	}
	free(v);
}

int ckpt_list(const char *root, struct ckpt_info **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct ckpt_info *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	int r = 0;
	while ((de = readdir(d)) != NULL) {
		if (!ckpt_is_id(de->d_name))
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct ckpt_info *g = realloc(v, ncap * sizeof *v);
			if (!g) {
				r = -ENOMEM;
				break;
			}
			v = g;
			cap = ncap;
		}
		struct ckpt_info *x = &v[cnt++];
		memset(x, 0, sizeof *x);
		memcpy(x->id, de->d_name, CKPT_ID_LEN + 1);
		struct ckpt_store s;
		char err[256];
		if (ckpt_store_open(root, x->id, 0, &s, err, sizeof err) < 0) {
			x->damaged = true;
			x->workspace = strdup("");
			x->command = strdup("");
		} else {
			x->workspace = strdup(s.workspace);
			x->command = strdup(s.command);
			x->started = s.started;
			x->ended = s.ended;
			x->undone = s.undone;
			x->running = s.running;
			x->saved = s.j.saves;
			x->created = s.j.creates;
			int fd = fcntl(s.dirfd, F_DUPFD_CLOEXEC, 0);
			if (fd >= 0)
				x->bytes = tree_bytes(fd, 0);
			ckpt_store_close(&s);
		}
		if (!x->workspace || !x->command) {
			r = -ENOMEM;
			break;
		}
	}
	closedir(d);
	if (r < 0) {
		ckpt_list_free(v, cnt);
		return r;
	}
	if (cnt)
		qsort(v, cnt, sizeof *v, by_started);
	*out = v;
	*n = cnt;
	return 0;
}

static void put_size(FILE *f, unsigned long long b)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)b;
	unsigned u = 0;
	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		fprintf(f, "%8llu B  ", b);
	else
		fprintf(f, "%8.1f %-3s", x, units[u]);
}

void ckpt_list_print(FILE *f, const struct ckpt_info *v, size_t n)
{
	if (n == 0) {
		fputs("no checkpoints\n", f);
		return;
	}
	fprintf(f, "%-16s  %-19s  %-14s  %6s  %7s  %-12s  %s\n", "CHECKPOINT", "STARTED", "STATE",
		"SAVED", "CREATED", "SIZE", "WORKSPACE  COMMAND");
	for (size_t i = 0; i < n; i++) {
		const struct ckpt_info *x = &v[i];
		if (x->damaged) {
			fprintf(f, "%-16s  (damaged: its meta cannot be read)\n", x->id);
			continue;
		}
		char when[32] = "?";
		time_t t = (time_t)(x->started / 1000000000LL);
		struct tm tm;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
		char state[24];
		snprintf(state, sizeof state, "%s%s", x->running ? "running" : x->ended ? "ended" : "killed",
			 x->undone ? ",undone" : "");
		fprintf(f, "%-16s  %-19s  %-14s  %6zu  %7zu  ", x->id, when, state, x->saved,
			x->created);
		put_size(f, x->bytes);
		fputs("  ", f);
		termtext_put_text(f, x->workspace);
		fputs("  ", f);
		termtext_put_text(f, x->command);
		fputc('\n', f);
	}
}

int ckpt_resolve(const char *root, const char *prefix, char *out, size_t *hits)
{
	size_t pl = strlen(prefix);
	*hits = 0;
	if (pl < 4 || pl > CKPT_ID_LEN || strspn(prefix, "0123456789abcdefABCDEF") != pl)
		return -EINVAL;
	char low[CKPT_ID_LEN + 1];
	for (size_t i = 0; i <= pl; i++)
		low[i] = (char)(prefix[i] >= 'A' && prefix[i] <= 'F' ? prefix[i] + 32 : prefix[i]);
	DIR *d = opendir(root);
	if (!d)
		return -ENOENT;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (ckpt_is_id(de->d_name) && strncmp(de->d_name, low, pl) == 0) {
			if (!(*hits)++)
				memcpy(out, de->d_name, CKPT_ID_LEN + 1);
		}
	closedir(d);
	return *hits == 0 ? -ENOENT : *hits > 1 ? -EEXIST : 0;
}

/* True when ws is dir or one of its ancestors. */
static bool covers(const char *ws, const char *dir)
{
	size_t l = strlen(ws);
	while (l > 1 && ws[l - 1] == '/')
		l--;
	if (l == 1 && ws[0] == '/')
		return true;
	return strncmp(ws, dir, l) == 0 && (dir[l] == '\0' || dir[l] == '/');
}

int ckpt_for_dir(const char *root, const char *dir, char *out)
{
	struct ckpt_info *v;
	size_t n;
	if (ckpt_list(root, &v, &n) < 0)
		return -ENOENT;
	int r = -ENOENT;
	for (size_t i = 0; i < n; i++) /* newest first */
		if (!v[i].damaged && covers(v[i].workspace, dir)) {
			memcpy(out, v[i].id, CKPT_ID_LEN + 1);
			r = 0;
			break;
		}
	ckpt_list_free(v, n);
	return r;
}

/* Removes everything in dirfd (closed), depth-first; 0 or the first -errno. */
static int empty_tree(int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		int e = errno;
		close(dirfd);
		return -e;
	}
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd, de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR || depth > 8) {
			if (!r)
				r = -errno;
			continue;
		}
		int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = fd < 0 ? -errno : empty_tree(fd, depth + 1);
		if (!e && unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0)
			e = -errno;
		if (e && !r)
			r = e;
	}
	closedir(d);
	return r;
}

int ckpt_forget(const char *root, const char *id)
{
	if (!ckpt_is_id(id))
		return -EINVAL;
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", root, id) >= (int)sizeof path)
		return -ENAMETOOLONG;
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int lfd = openat(dfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(lfd);
		close(dfd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	int r = empty_tree(dfd, 0); /* takes dfd */
	if (!r && rmdir(path) < 0)
		r = -errno;
	if (lfd >= 0)
		close(lfd);
	return r;
}

int checkpoint_prune(const char *root, unsigned keep, unsigned keep_days, char *err, size_t cap)
{
	if (keep == 0 && keep_days == 0)
		return 0;
	struct ckpt_info *v;
	size_t n;
	int r = ckpt_list(root, &v, &n);
	if (r < 0) {
		snprintf(err, cap, "cannot list the checkpoints in %s: %s", root, strerror(-r));
		return r;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	long long now_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
	long long horizon = now_ns - (long long)keep_days * 86400LL * 1000000000LL;
	int removed = 0, first = 0;
	size_t rank = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].damaged)
			continue;
		bool beyond = keep && rank >= keep;
		rank++;
		bool old = keep_days && v[i].started < horizon;
		if (v[i].running || !(beyond || old))
			continue;
		if (!v[i].ended && v[i].started > now_ns - 60LL * 1000000000LL)
			continue;
		int e = ckpt_forget(root, v[i].id);
		if (e == 0)
			removed++;
		else if (e != -EBUSY && !first) {
			first = e;
			snprintf(err, cap, "cannot remove the checkpoint %s/%s: %s", root, v[i].id,
				 strerror(-e));
		}
	}
	ckpt_list_free(v, n);
	return first ? first : removed;
}
