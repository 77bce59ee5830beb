/* canon.c — kernel-faithful path canonicalisation for the shim, behind a per-thread, generation-checked cache. */
#include "core/canon.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- syscalls: raw, so the shim's own hooks are never re-entered ----------- */

static long sys_readlink(int dirfd, const char *path, char *buf, size_t len)
{
	return syscall(SYS_readlinkat, dirfd, path, buf, len);
}

/*
 * True when (dirfd, path, flags) and name (absolute) are the same file: same
 * device and inode (statx(2); follows symlinks, so a /proc magic link is
 * taken to what it refers to).  False on any error.
 */
static bool same_file(int dirfd, const char *path, int flags, const char *name)
{
	struct statx a = { 0 }, b = { 0 };
	if (syscall(SYS_statx, dirfd, path, flags, STATX_INO, &a) < 0 ||
	    syscall(SYS_statx, AT_FDCWD, name, 0, STATX_INO, &b) < 0)
		return false;
	return a.stx_dev_major == b.stx_dev_major && a.stx_dev_minor == b.stx_dev_minor &&
	       a.stx_ino == b.stx_ino;
}

/* ---- the walk state -------------------------------------------------------- */

/* The canonical prefix resolved so far, and what the walk learnt on the way. */
struct walk {
	char *out;     /* canonical prefix, NUL-terminated, always starts with '/' */
	size_t cap;    /* bytes available at out */
	size_t len;    /* strlen(out) */
	int links;     /* symlinks followed so far (the kernel counts per lookup) */
	bool lexical;  /* a lookup failed: the rest is appended without syscalls */
	bool proc;     /* the walk went through /proc: pid/fd dependent, never cached */
};

static bool is_proc_prefix(const char *s, size_t len)
{
	return len >= 5 && memcmp(s, "/proc", 5) == 0 && (len == 5 || s[5] == '/');
}

static int walk_root(struct walk *w)
{
	if (w->cap < 2)
		return -ENAMETOOLONG;
	w->out[0] = '/';
	w->out[1] = '\0';
	w->len = 1;
	return 0;
}

/* Sets the prefix to s (absolute, canonical, len bytes). */
static int walk_set(struct walk *w, const char *s, size_t len)
{
	if (len + 1 > w->cap)
		return -ENAMETOOLONG;
	memmove(w->out, s, len);
	w->out[len] = '\0';
	w->len = len;
	w->proc |= is_proc_prefix(s, len);
	return 0;
}

/* "..": drop the last component; "/" stays "/" (path_resolution(7)). */
static void walk_pop(struct walk *w)
{
	size_t i = w->len;
	while (i > 1 && w->out[i - 1] != '/')
		i--;
	w->len = i > 1 ? i - 1 : 1;
	w->out[w->len] = '\0';
}

static int walk_push(struct walk *w, const char *name, size_t n)
{
	size_t sep = w->len > 1;
	if (w->len + sep + n + 1 > w->cap)
		return -ENAMETOOLONG;
	if (sep)
		w->out[w->len++] = '/';
	memcpy(w->out + w->len, name, n);
	w->len += n;
	w->out[w->len] = '\0';
	w->proc |= is_proc_prefix(w->out, w->len);
	return 0;
}

/* Applies one component: "." nothing, ".." pop, else push. */
static int walk_component(struct walk *w, const char *name, size_t n)
{
	if (n == 1 && name[0] == '.')
		return 0;
	if (n == 2 && name[0] == '.' && name[1] == '.') {
		walk_pop(w);
		return 0;
	}
	return walk_push(w, name, n);
}

/* Appends s (len bytes, any mix of components and slashes) without looking at the filesystem. */
static int walk_lexical(struct walk *w, const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		while (i < len && s[i] == '/')
			i++;
		size_t start = i;
		while (i < len && s[i] != '/')
			i++;
		if (i > start) {
			int r = walk_component(w, s + start, i - start);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- symlinks -------------------------------------------------------------- */

static bool ends_with_deleted(const char *s, size_t n)
{
	static const char tag[] = " (deleted)";
	return n > sizeof tag - 1 && memcmp(s + n - (sizeof tag - 1), tag, sizeof tag - 1) == 0;
}

/*
 * A /proc magic link's text (proc(5)) is a path only when it is absolute, or
 * one of procfs's own relative links ("self" -> "1234", "mounts" ->
 * "self/mounts"), which never hold ':' or start with '('.  Pipes, sockets,
 * anon inodes and namespaces read "type:[inode]"; a deleted file reads
 * "/path (deleted)" — told apart from a file really named so by comparing
 * identities.  target is NUL-terminated, n bytes.
 */
static int check_magic(const struct walk *w, const char *target, size_t n)
{
	if (target[0] != '/')
		return memchr(target, ':', n) || target[0] == '(' ? -ENXIO : 0;
	if (!ends_with_deleted(target, n))
		return 0;
	return same_file(AT_FDCWD, w->out, 0, target) ? 0 : -ESTALE;
}

/*
 * The prefix w->out ends in a component the walk must follow if it is a
 * symlink.  rest is the walk's buffer: rest[0..*pos) is free, rest[*pos..]
 * the unresolved remainder.  A link's target is spliced in front of the
 * remainder (so "link/../x" pops from the target: resolution is left to
 * right, as path_resolution(7) does it), and an absolute target restarts at
 * "/" (symlink(7)).  A failed lookup switches the walk to lexical.
 */
static int follow(struct walk *w, char *rest, size_t *pos)
{
	long n = sys_readlink(AT_FDCWD, w->out, rest, *pos);
	if (n < 0) {
		int e = errno;
		if (e == EINVAL) /* exists, not a symlink */
			return 0;
		if (e == ENOENT || e == ENOTDIR || e == EACCES) {
			w->lexical = true;
			return 0;
		}
		return -e;
	}
	if (++w->links > CANON_MAX_LINKS)
		return -ELOOP;
	if ((size_t)n >= *pos) /* maybe truncated, or no room to splice */
		return -ENAMETOOLONG;
	if (n == 0) { /* an empty target fails lookup with ENOENT */
		w->lexical = true;
		return 0;
	}
	rest[n] = '\0'; /* in the free area: n < *pos */
	if (w->proc) {
		int r = check_magic(w, rest, (size_t)n);
		if (r < 0)
			return r;
	}
	walk_pop(w);
	if (rest[0] == '/')
		walk_root(w);
	*pos -= (size_t)n;
	memmove(rest + *pos, rest, (size_t)n);
	return 0;
}

/*
 * Walks path (plen bytes) from the canonical prefix in w, component by
 * component.  follow_final: follow a symlink in the last component (a
 * trailing '/' forces it anyway).  Stack: one PATH_MAX buffer.
 */
static int walk_path(struct walk *w, const char *path, size_t plen, bool follow_final)
{
	char rest[PATH_MAX];
	if (plen >= sizeof rest)
		return -ENAMETOOLONG;
	size_t pos = sizeof rest - 1 - plen; /* right-aligned: targets are spliced in front */
	memcpy(rest + pos, path, plen);
	rest[sizeof rest - 1] = '\0';
	while (rest[pos]) {
		if (w->lexical)
			return walk_lexical(w, rest + pos, sizeof rest - 1 - pos);
		while (rest[pos] == '/')
			pos++;
		size_t start = pos;
		while (rest[pos] && rest[pos] != '/')
			pos++;
		if (pos == start)
			break;
		bool dotdot = pos - start <= 2 && rest[start] == '.' && rest[pos - 1] == '.';
		int r = walk_component(w, rest + start, pos - start);
		if (r < 0)
			return r;
		if (dotdot) /* "." or "..": nothing to follow */
			continue;
		bool final = !rest[pos];
		if (final && !follow_final)
			continue;
		r = follow(w, rest, &pos);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- the base: cwd or dirfd ------------------------------------------------ */

/* The kernel's cwd name (getcwd(2): canonical, or "(unreachable)..."). */
static int base_cwd_raw(struct walk *w)
{
	long n = syscall(SYS_getcwd, w->out, w->cap);
	if (n < 0)
		return errno == ERANGE ? -ENAMETOOLONG : -errno;
	if (w->out[0] != '/')
		return -ENXIO;
	w->len = strlen(w->out);
	w->proc |= is_proc_prefix(w->out, w->len);
	return 0;
}

/* Writes "/proc/self/fd/<fd>" to buf (at least 32 bytes). */
static void fd_link_name(int fd, char *buf)
{
	static const char head[] = "/proc/self/fd/";
	char digits[12];
	size_t n = 0;
	unsigned v = (unsigned)fd;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(buf, head, sizeof head - 1);
	char *p = buf + sizeof head - 1;
	while (n)
		*p++ = digits[--n];
	*p = '\0';
}

/* The name of what dirfd refers to, read from its /proc/self/fd link (proc(5)). */
static int base_fd(struct walk *w, int dirfd)
{
	char link[32];
	if (dirfd < 0)
		return -EBADF;
	fd_link_name(dirfd, link);
	long n = sys_readlink(AT_FDCWD, link, w->out, w->cap);
	if (n < 0)
		return errno == ENOENT ? -EBADF : -errno;
	if ((size_t)n >= w->cap)
		return -ENAMETOOLONG;
	w->out[n] = '\0';
	w->len = (size_t)n;
	if (w->out[0] != '/')
		return -ENXIO;
	if (ends_with_deleted(w->out, w->len) && !same_file(dirfd, "", AT_EMPTY_PATH, w->out))
		return -ESTALE;
	w->proc |= is_proc_prefix(w->out, w->len);
	return 0;
}

/* ---- the cache ------------------------------------------------------------- */

#define CACHE_WAYS 2
#define FILE_SETS 32 /* whole paths as spelled */
#define DIR_SETS 16  /* their directory parts: kept apart so a flood of new names cannot evict them */
#define SLOT_DATA 224 /* key + NUL + value + NUL: longer pairs are not cached */
#define CWD_MAX 256

enum {
	KIND_ABS = 1,      /* key is an absolute path */
	KIND_REL = 2,      /* key is relative to the cwd */
	KIND_NOFOLLOW = 4, /* resolved with CANON_NOFOLLOW */
};

/* One cached resolution: key as spelled -> canonical value. 256 bytes. */
struct slot {
	unsigned long tag;  /* generation + 1 when filled; 0 empty or being written */
	long stamp;         /* coarse monotonic ns when filled */
	uint32_t hash;
	uint16_t klen, vlen;
	uint8_t kind;       /* KIND_* */
	uint8_t links;      /* symlinks the resolution followed (the ELOOP budget) */
	char data[SLOT_DATA];
};
_Static_assert(sizeof(struct slot) == 256, "a slot is four cache lines");

/*
 * Per thread, so lookups take no lock and no atomic read-modify-write.
 * initial-exec: the shim is loaded at startup by LD_PRELOAD, so its TLS is in
 * the static block and access is one %fs-relative load, never a
 * __tls_get_addr call (which may allocate).  The tables themselves (24 KiB)
 * are mapped on a thread's first cached resolution, not kept in static TLS:
 * every process and thread would otherwise zero them at start, and most
 * processes (true, cc1, a shell's children) never resolve a path.
 */
#define TLS __thread __attribute__((tls_model("initial-exec")))
struct thread_caches {
	struct slot file[FILE_SETS * CACHE_WAYS];
	struct slot dir[DIR_SETS * CACHE_WAYS];
	struct {
		unsigned long tag;
		long stamp;
		size_t len;
		char path[CWD_MAX];
	} cwd;
};
static TLS struct thread_caches *caches;
#define file_cache (caches->file)
#define dir_cache (caches->dir)
#define cwd_cache (caches->cwd)
/* Non-zero while this thread is inside the cache: a signal handler then bypasses it. */
static TLS volatile unsigned cache_busy;

static pthread_key_t caches_key;
static pthread_once_t caches_once = PTHREAD_ONCE_INIT;
static bool caches_keyed;

static void caches_unmap(void *p)
{
	munmap(p, sizeof(struct thread_caches));
}

static void caches_key_init(void)
{
	caches_keyed = pthread_key_create(&caches_key, caches_unmap) == 0;
}

/* This thread's tables, mapped on first use (unmapped at thread exit); NULL: no cache. */
static struct thread_caches *thread_caches(void)
{
	if (caches)
		return caches;
	void *p = mmap(NULL, sizeof(struct thread_caches), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	pthread_once(&caches_once, caches_key_init);
	if (caches_keyed)
		pthread_setspecific(caches_key, p);
	caches = p;
	return caches;
}

static atomic_ulong local_gen;
static _Atomic(unsigned long *) shared_gen;

/* The current generation + 1 (never 0): the tag of entries valid now. */
static unsigned long current_tag(void)
{
	unsigned long *shared = atomic_load_explicit(&shared_gen, memory_order_acquire);
	unsigned long g = atomic_load_explicit(&local_gen, memory_order_acquire);
	if (shared)
		g += __atomic_load_n(shared, __ATOMIC_ACQUIRE);
	return g + 1;
}

void canon_invalidate(void)
{
	unsigned long *shared = atomic_load_explicit(&shared_gen, memory_order_acquire);
	if (shared)
		__atomic_fetch_add(shared, 1, __ATOMIC_SEQ_CST);
	else
		atomic_fetch_add_explicit(&local_gen, 1, memory_order_seq_cst);
}

void canon_share_generation(unsigned long *counter)
{
	/* the local bump keeps the sum (the tag) from ever repeating across the switch */
	atomic_fetch_add_explicit(&local_gen, 1, memory_order_seq_cst);
	atomic_store_explicit(&shared_gen, counter, memory_order_release);
}

/* Coarse clock: a vDSO read of a few ns, no syscall (clock_gettime(2)). */
static long now_coarse(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return -1;
	return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static bool fresh(unsigned long tag, long stamp, unsigned long now_tag, long now)
{
	return tag == now_tag && now - stamp < CANON_CACHE_TTL_NS;
}

static uint64_t load64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* Word-at-a-time multiplicative hash: the hot path's main cost after the copy. */
static uint32_t hash_key(const char *s, size_t n, unsigned kind)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = (n << 8 | kind) * k;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		h = (h ^ load64(s + i)) * k;
		h ^= h >> 32;
	}
	if (i < n) {
		uint64_t t = 0;
		memcpy(&t, s + i, n - i);
		h = (h ^ t) * k;
	}
	h ^= h >> 29;
	return (uint32_t)h;
}

/* The set of a hash: the file table, or the directory table when dir. */
static struct slot *cache_set(bool dir, uint32_t h)
{
	return dir ? &dir_cache[(h % DIR_SETS) * CACHE_WAYS] : &file_cache[(h % FILE_SETS) * CACHE_WAYS];
}

static struct slot *cache_find(bool dir, uint32_t h, unsigned kind, const char *key, size_t klen,
			       unsigned long tag, long now)
{
	struct slot *set = cache_set(dir, h);
	for (int i = 0; i < CACHE_WAYS; i++) {
		struct slot *s = &set[i];
		if (s->hash == h && s->kind == kind && s->klen == klen && fresh(s->tag, s->stamp, tag, now) &&
		    memcmp(s->data, key, klen) == 0)
			return s;
	}
	return NULL;
}

/* Copies a hit to out; its link count is the ELOOP budget already spent. */
static int cache_copy(const struct slot *s, char *out, size_t outlen, int *links)
{
	if ((size_t)s->vlen + 1 > outlen)
		return -ENAMETOOLONG;
	memcpy(out, s->data + s->klen + 1, (size_t)s->vlen + 1);
	if (links)
		*links = s->links;
	return s->vlen;
}

static struct slot *cache_victim(bool dir, uint32_t h, unsigned long tag, long now)
{
	struct slot *set = cache_set(dir, h);
	for (int i = 0; i < CACHE_WAYS; i++)
		if (!fresh(set[i].tag, set[i].stamp, tag, now))
			return &set[i];
	return set[0].stamp <= set[1].stamp ? &set[0] : &set[1];
}

/*
 * The tag is cleared first and set last (with compiler barriers: only a
 * signal handler on this thread can observe the slot, and cache_busy keeps
 * it out), so a half-written slot is never taken for a valid one.
 */
static void cache_store(bool dir, uint32_t h, unsigned kind, const char *key, size_t klen, const char *val,
			size_t vlen, int links, unsigned long tag, long now)
{
	if (klen + vlen + 2 > SLOT_DATA)
		return;
	struct slot *s = cache_victim(dir, h, tag, now);
	s->tag = 0;
	atomic_signal_fence(memory_order_seq_cst);
	s->hash = h;
	s->kind = (uint8_t)kind;
	s->klen = (uint16_t)klen;
	s->vlen = (uint16_t)vlen;
	s->links = (uint8_t)links;
	s->stamp = now;
	memcpy(s->data, key, klen);
	s->data[klen] = '\0';
	memcpy(s->data + klen + 1, val, vlen + 1);
	atomic_signal_fence(memory_order_seq_cst);
	s->tag = tag;
}

/* The cwd, from the per-thread copy while it is fresh (chdir invalidates). */
static int base_cwd(struct walk *w, bool use_cache, unsigned long tag, long now)
{
	if (use_cache && fresh(cwd_cache.tag, cwd_cache.stamp, tag, now))
		return walk_set(w, cwd_cache.path, cwd_cache.len);
	int r = base_cwd_raw(w);
	if (r < 0 || !use_cache || w->len >= CWD_MAX || w->proc)
		return r;
	cwd_cache.tag = 0;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(cwd_cache.path, w->out, w->len + 1);
	cwd_cache.len = w->len;
	cwd_cache.stamp = now;
	atomic_signal_fence(memory_order_seq_cst);
	cwd_cache.tag = tag;
	return 0;
}

/* ---- resolution ------------------------------------------------------------ */

/* What one canon_path() call is about. */
struct request {
	int dirfd;
	const char *path;
	size_t plen;
	unsigned flags;
	bool use_cache;   /* absolute or cwd-relative, cache allowed, not re-entered */
	unsigned long tag;
	long now;
};

static unsigned key_kind(const struct request *q, bool nofollow)
{
	return (q->path[0] == '/' ? KIND_ABS : KIND_REL) | (nofollow ? KIND_NOFOLLOW : 0);
}

static int start_base(struct walk *w, const struct request *q)
{
	if (q->path[0] == '/')
		return walk_root(w);
	if (q->dirfd == AT_FDCWD)
		return base_cwd(w, q->use_cache, q->tag, q->now);
	return base_fd(w, q->dirfd);
}

/* Resolves path[0..n) from the base with no cache at all. */
static int resolve_uncached(struct walk *w, const struct request *q, size_t n, bool follow_final)
{
	int r = start_base(w, q);
	if (r < 0)
		return r;
	return walk_path(w, q->path, n, follow_final);
}

/*
 * Resolves the directory part path[0..n) (always followed), from the cache
 * or by a walk that then fills it.
 */
static int resolve_dir(struct walk *w, const struct request *q, size_t n)
{
	if (n == 0 || (n == 1 && q->path[0] == '/'))
		return start_base(w, q);
	if (!q->use_cache)
		return resolve_uncached(w, q, n, true);
	unsigned kind = key_kind(q, false);
	uint32_t h = hash_key(q->path, n, kind);
	struct slot *s = cache_find(true, h, kind, q->path, n, q->tag, q->now);
	if (s) {
		int r = cache_copy(s, w->out, w->cap, &w->links);
		if (r < 0)
			return r;
		w->len = (size_t)r;
		return 0;
	}
	int r = resolve_uncached(w, q, n, true);
	if (r == 0 && !w->proc && !w->lexical)
		cache_store(true, h, kind, q->path, n, w->out, w->len, w->links, q->tag, q->now);
	return r;
}

/*
 * Where the final component starts, and where the directory part ends
 * (slashes between them excluded): "a/b//c/" -> dir "a/b", final "c/".
 */
static void split_final(const char *path, size_t plen, size_t *dir_len, size_t *final_at)
{
	size_t e = plen;
	while (e > 0 && path[e - 1] == '/')
		e--;
	size_t f = e;
	while (f > 0 && path[f - 1] != '/')
		f--;
	size_t d = f;
	while (d > 0 && path[d - 1] == '/')
		d--;
	if (f > 0 && d == 0) /* "/x", "//x": the directory is "/" */
		d = 1;
	*final_at = f;
	*dir_len = d;
}

/* Directory part (cached), then the final component: a new file in a known directory costs one readlinkat. */
static int resolve_split(struct walk *w, const struct request *q)
{
	size_t dir_len, final_at;
	split_final(q->path, q->plen, &dir_len, &final_at);
	int r = resolve_dir(w, q, dir_len);
	if (r < 0)
		return r;
	if (final_at == 0 && q->path[0] == '/') /* all slashes: "/" */
		final_at = q->plen;
	return walk_path(w, q->path + final_at, q->plen - final_at, !(q->flags & CANON_NOFOLLOW));
}

static int resolve_cached(struct walk *w, const struct request *q)
{
	unsigned kind = key_kind(q, q->flags & CANON_NOFOLLOW);
	uint32_t h = hash_key(q->path, q->plen, kind);
	struct slot *s = cache_find(false, h, kind, q->path, q->plen, q->tag, q->now);
	if (s)
		return cache_copy(s, w->out, w->cap, NULL);
	int r = resolve_split(w, q);
	if (r < 0)
		return r;
	if (!w->proc)
		cache_store(false, h, kind, q->path, q->plen, w->out, w->len, w->links, q->tag, q->now);
	return (int)w->len;
}

static int resolve(int dirfd, const char *path, unsigned flags, char *out, size_t outlen)
{
	if (!path || !out)
		return -EFAULT;
	size_t plen = strnlen(path, PATH_MAX);
	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	struct walk w = { .out = out, .cap = outlen > INT_MAX ? INT_MAX : outlen };
	if (w.cap < 2)
		return -ENAMETOOLONG;
	struct request q = { .dirfd = dirfd, .path = path, .plen = plen, .flags = flags };
	if (plen == 0) {
		if (!(flags & CANON_EMPTY_PATH))
			return -ENOENT;
		q.path = ".";
		q.plen = 1;
	}
	q.use_cache = !(flags & CANON_NOCACHE) && (q.path[0] == '/' || dirfd == AT_FDCWD) &&
		      !cache_busy && thread_caches() != NULL;
	if (q.use_cache) {
		q.now = now_coarse();
		q.use_cache = q.now >= 0; /* no clock, no TTL: no cache */
	}
	if (!q.use_cache) {
		int r = resolve_uncached(&w, &q, q.plen, !(flags & CANON_NOFOLLOW));
		return r < 0 ? r : (int)w.len;
	}
	cache_busy++;
	atomic_signal_fence(memory_order_seq_cst);
	q.tag = current_tag(); /* before the walk: a change during it leaves the entry stale-tagged */
	int r = resolve_cached(&w, &q);
	atomic_signal_fence(memory_order_seq_cst);
	cache_busy--;
	return r;
}

int canon_path(int dirfd, const char *path, unsigned flags, char *out, size_t outlen)
{
	int saved = errno;
	int r = resolve(dirfd, path, flags, out, outlen);
	errno = saved;
	return r;
}

int canon_lexical(const char *base, const char *path, char *out, size_t outlen)
{
	if (!path || !out)
		return -EFAULT;
	struct walk w = { .out = out, .cap = outlen > INT_MAX ? INT_MAX : outlen };
	int r = walk_root(&w);
	if (r < 0)
		return r;
	if (path[0] != '/') {
		if (!base || base[0] != '/')
			return -EINVAL;
		r = walk_lexical(&w, base, strlen(base));
		if (r < 0)
			return r;
	}
	r = walk_lexical(&w, path, strlen(path));
	return r < 0 ? r : (int)w.len;
}
