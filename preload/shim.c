/* shim.c — the preload shim's core: real functions, the policy image, the re-entrancy guard and the environment it keeps. */
#include "preload/shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/canon.h"

#define HOOK(ret, name, params) name##_fn real_##name;
#include "preload/hooks.def"
#undef HOOK

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static const struct policy_image *image;
static char env_preload[4096];  /* "LD_PRELOAD=<this shim>" */
static char env_dir[4096];      /* "AIRLOCK_DIR=<session dir>" */
static size_t shim_path_len;    /* length of the shim's own path in env_preload */
static __thread int depth __attribute__((tls_model("initial-exec")));

/* dlsym(RTLD_NEXT) of every hook; a pointer back to our own wrapper would loop forever. */
static void resolve_real(void)
{
#define HOOK(ret, name, params)                                                       \
	real_##name = (name##_fn)dlsym(RTLD_NEXT, #name);                             \
	if ((void *)real_##name == (void *)&name)                                     \
		real_##name = NULL;
#include "preload/hooks.def"
#undef HOOK
}

static int raw_open(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0);
}

/* Maps $AIRLOCK_DIR/policy.img read-only and validates it; leaves image NULL on any failure. */
static void map_image(const char *dir)
{
	char path[4096], err[256];
	struct stat st;
	if (!dir || (size_t)snprintf(path, sizeof path, "%s/policy.img", dir) >= sizeof path)
		return;
	int fd = raw_open(path, O_RDONLY);
	if (fd < 0)
		return;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	syscall(SYS_close, fd);
	if (p == MAP_FAILED)
		return;
	if (policy_image_open(p, (size_t)st.st_size, &image, err, sizeof err) != 0) {
		munmap(p, (size_t)st.st_size);
		image = NULL;
	}
}

static void init_env(const char *dir)
{
	Dl_info info;
	if (dladdr((void *)&shim_init, &info) && info.dli_fname &&
	    (size_t)snprintf(env_preload, sizeof env_preload, "LD_PRELOAD=%s", info.dli_fname) <
		    sizeof env_preload)
		shim_path_len = strlen(info.dli_fname);
	else
		env_preload[0] = '\0';
	if (!dir || (size_t)snprintf(env_dir, sizeof env_dir, "AIRLOCK_DIR=%s", dir) >= sizeof env_dir)
		env_dir[0] = '\0';
}

static void init_once_fn(void)
{
	int saved = errno;
	const char *dir = getenv("AIRLOCK_DIR");
	resolve_real();
	init_env(dir);
	map_image(dir);
	shim_report_init(dir);
	errno = saved;
}

void shim_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

__attribute__((constructor)) static void shim_constructor(void)
{
	shim_init();
}

const struct policy_image *shim_image(void)
{
	return image;
}

bool shim_enter(void)
{
	if (depth)
		return false;
	depth = 1;
	shim_init();
	return true;
}

void shim_leave(void)
{
	depth = 0;
}

void shim_namespace_changed(void)
{
	canon_invalidate();
}

enum policy_decision shim_file(int dirfd, const char *path, unsigned action, unsigned canon_flags)
{
	char canon[4096];
	struct shim_action a = { .source = SHIM_OPEN, .action = action, .path = canon };
	if (!path)
		return POLICY_ALLOW; /* the real call fails with EFAULT */
	int n = canon_path(dirfd, path, canon_flags, canon, sizeof canon);
	if (n < 0) {
		/* not resolvable to a name (an fd that is a pipe, a too-long path): decide on the text */
		if ((size_t)snprintf(canon, sizeof canon, "%s", path) >= sizeof canon)
			return POLICY_DENY;
	}
	/* O_RDWR is a read and a write: the most severe verdict decides */
	a.v = (struct policy_verdict){ POLICY_DENY, -1 };
	for (unsigned bit = POLICY_FILE_READ; image && bit <= POLICY_FILE_EXEC; bit <<= 1) {
		if (!(action & bit))
			continue;
		struct policy_verdict v = policy_decide_open(image, canon, bit);
		if (bit == (action & -action) || v.decision > a.v.decision) {
			a.v = v;
			a.action = bit;
		}
	}
	return shim_resolve(&a);
}

/* True when the NAME=value entry's name is `name` (len bytes, '=' excluded). */
static bool env_is(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* True when the LD_PRELOAD value lists the shim's own path. */
static bool preload_has_shim(const char *value)
{
	const char *self = env_preload + sizeof "LD_PRELOAD=" - 1;
	for (const char *p = value; *p;) {
		size_t n = strcspn(p, ": ");
		if (n == shim_path_len && strncmp(p, self, n) == 0)
			return true;
		p += n;
		p += *p != '\0';
	}
	return false;
}

char *const *shim_fix_env(char *const envp[], char **out, size_t cap, char *buf, size_t bufsize)
{
	size_t n = 0, preload_at = (size_t)-1;
	bool has_dir = false, has_shim = false;
	if (!env_preload[0] || !env_dir[0])
		return envp;
	for (; envp && envp[n]; n++) {
		if (env_is(envp[n], "LD_PRELOAD", 10)) {
			preload_at = n;
			has_shim = preload_has_shim(envp[n] + 11);
		} else if (env_is(envp[n], "AIRLOCK_DIR", 11)) {
			has_dir = strcmp(envp[n], env_dir) == 0;
		}
	}
	if (has_shim && has_dir)
		return envp;
	if (n + 3 > cap)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == preload_at || env_is(envp[i], "AIRLOCK_DIR", 11))
			continue;
		out[k++] = envp[i];
	}
	if (preload_at != (size_t)-1 && !has_shim) {
		/* keep the program's own preloads, after ours */
		if ((size_t)snprintf(buf, bufsize, "%s:%s", env_preload, envp[preload_at] + 11) >=
		    bufsize)
			return NULL;
		out[k++] = buf;
	} else {
		out[k++] = preload_at != (size_t)-1 ? envp[preload_at] : env_preload;
	}
	out[k++] = env_dir;
	out[k] = NULL;
	return out;
}
