/* shim.c — the preload shim's core: real functions, the policy image, the re-entrancy guard and the environment it keeps. */
#include "preload/shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/buildid.h"
#include "core/canon.h"

#define HOOK(ret, name, params) name##_fn real_##name;
#include "preload/hooks.def"
#undef HOOK

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t image_once = PTHREAD_ONCE_INIT;
static const char *session_dir; /* $AIRLOCK_DIR, from the environment at start-up */
static const struct policy_image *image;
static char env_preload[4096];  /* "LD_PRELOAD=<this shim>" */
static const char *image_path;  /* the tripwire mode's $AIRLOCK_IMAGE (a copy), or NULL */
static char image_copy[4096];
static bool tripwire;           /* no $AIRLOCK_DIR, and $AIRLOCK_IMAGE or $AIRLOCK_LOG set */
/*
 * The NAME=value entries children must carry (shim_fix_env): "AIRLOCK_DIR=..."
 * under a launcher; AIRLOCK_IMAGE, AIRLOCK_LOG and AIRLOCK_SESSION in the
 * tripwire mode.  nkeep 0: none (no session: children fail closed too).
 */
#define KEEP_MAX 3
static char env_keep[KEEP_MAX][4096];
static size_t keep_name_len[KEEP_MAX];
static size_t nkeep;
static const char *env_drop;    /* a variable children must not carry ("AIRLOCK_DIR" in the tripwire mode) */
static size_t shim_path_len;    /* length of the shim's own path in env_preload */
static __thread int depth __attribute__((tls_model("initial-exec")));
static uint64_t init_ns;  /* what the constructor's shim_init() cost, for `make bench` */
static uint64_t image_ns; /* what mapping and validating the image cost */

void *shim_dlnext(const char *name, void *self)
{
	void *p = dlsym(RTLD_NEXT, name);
	return p == self ? NULL : p;
}

/*
 * The exec family is resolved now: it runs in vfork children (Python's
 * subprocess), where dlsym's loader lock must not be taken.
 */
static void resolve_exec_family(void)
{
#define EAGER(name) real_##name = (name##_fn)shim_dlnext(#name, (void *)&name)
	EAGER(execve);
	EAGER(execvpe);
	EAGER(fexecve);
	EAGER(execveat);
	EAGER(posix_spawn);
	EAGER(posix_spawnp);
#undef EAGER
}

bool shim_join(char *out, size_t cap, ...)
{
	va_list ap;
	size_t n = 0;
	bool fits = true;
	va_start(ap, cap);
	for (const char *p; fits && (p = va_arg(ap, const char *)) != NULL;) {
		size_t len = strlen(p);
		fits = n + len < cap;
		if (fits) {
			memcpy(out + n, p, len);
			n += len;
		}
	}
	va_end(ap);
	if (cap)
		out[fits ? n : 0] = '\0';
	return fits;
}

static int raw_open(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0);
}

/*
 * No image, so every decision of this process is a deny: said once on
 * stderr (fd 2, one write(2)), with why, for the person who started it with
 * LD_PRELOAD by hand or from a session that has ended (airlock serve).
 */
static void say_no_image(const char *dir, const char *why)
{
	char msg[4096 + 512];
	if (!dir)
		shim_join(msg, sizeof msg, "airlock-preload: AIRLOCK_DIR is not set, so there is no "
			  "policy: everything this process asks is denied (fail closed); join a "
			  "session with eval \"$(airlock env)\" while `airlock serve` runs\n",
			  (char *)NULL);
	else if (!shim_join(msg, sizeof msg, "airlock-preload: no policy at AIRLOCK_DIR=", dir, " (",
			    why, "): the session has ended or is out of reach; everything this "
			    "process asks is denied (fail closed)\n", (char *)NULL))
		shim_join(msg, sizeof msg, "airlock-preload: no policy at AIRLOCK_DIR: everything this "
			  "process asks is denied (fail closed)\n", (char *)NULL);
	(void)!syscall(SYS_write, 2, msg, strlen(msg));
}

/*
 * Maps the image at path ($AIRLOCK_DIR/policy.img, or the tripwire mode's
 * $AIRLOCK_IMAGE) read-only and validates it; leaves image NULL on any
 * failure, with why (err, errlen bytes).
 */
static void map_image(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = raw_open(path, O_RDONLY);
	if (fd < 0) {
		/* no strerror(3): this may run in a vfork child, where its locale lookup must not */
		shim_join(err, errlen, errno == ENOENT    ? "no such file or directory"
				       : errno == EACCES  ? "permission denied"
				       : errno == ENOTDIR ? "not a directory"
							  : "it cannot be opened", (char *)NULL);
		return;
	}
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	syscall(SYS_close, fd);
	if (p == MAP_FAILED) {
		shim_join(err, errlen, "empty or not mappable", (char *)NULL);
		return;
	}
	if (policy_image_open(p, (size_t)st.st_size, &image, err, errlen) != 0) {
		munmap(p, (size_t)st.st_size);
		image = NULL;
	}
}

/*
 * The shim's own path, for LD_PRELOAD in children: the LD_PRELOAD entry
 * naming airlock-preload.so (the launcher sets an absolute one), else what
 * dladdr(3) says (slower: it walks every loaded object's symbols).
 */
static void init_env(const char *dir)
{
	const char *pre = getenv("LD_PRELOAD"), *self = NULL;
	size_t len = 0;
	for (const char *p = pre; p && *p; p += len + (p[len] != '\0')) {
		len = strcspn(p, ": ");
		if (len >= 18 && strncmp(p + len - 18, "airlock-preload.so", 18) == 0 && p[0] == '/') {
			self = p;
			break;
		}
	}
	Dl_info info;
	if (!self && dladdr((void *)&shim_init, &info) && info.dli_fname) {
		self = info.dli_fname;
		len = strlen(self);
	}
	env_preload[0] = '\0';
	if (self && len + sizeof "LD_PRELOAD=" <= sizeof env_preload) {
		memcpy(env_preload, "LD_PRELOAD=", 11);
		memcpy(env_preload + 11, self, len);
		env_preload[11 + len] = '\0';
		shim_path_len = len;
	}
	nkeep = 0;
	if (dir && shim_join(env_keep[0], sizeof env_keep[0], "AIRLOCK_DIR=", dir, (char *)NULL)) {
		keep_name_len[0] = sizeof "AIRLOCK_DIR" - 1;
		nkeep = 1;
	}
}

/* Adds NAME=value to the entries children carry; false when it does not fit. */
static bool keep_env(const char *name, const char *value)
{
	if (nkeep >= KEEP_MAX ||
	    !shim_join(env_keep[nkeep], sizeof env_keep[nkeep], name, "=", value, (char *)NULL))
		return false;
	keep_name_len[nkeep++] = strlen(name);
	return true;
}

/*
 * The tripwire mode's variables, kept for children: AIRLOCK_IMAGE,
 * AIRLOCK_LOG and AIRLOCK_SESSION (derived by the first process when unset).
 * One that does not fit, or is unset, is not passed on: the child's shim
 * then fails closed as this one does.
 */
static void init_tripwire(const char *log)
{
	shim_tripwire_init(log, getenv("AIRLOCK_SESSION"), image_path);
	env_drop = "AIRLOCK_DIR";
	nkeep = 0;
	if (image_path)
		keep_env("AIRLOCK_IMAGE", image_path);
	if (log)
		keep_env("AIRLOCK_LOG", log);
	keep_env("AIRLOCK_SESSION", shim_tripwire_session());
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Before a fork, map the image and open the event socket in the parent, so
 * that the children it forks (a shell's, a build's) inherit both instead of
 * each mapping and connecting its own just before it execs.
 */
static void warm_before_fork(void)
{
	int saved = errno;
	if (shim_image())
		shim_report_warm();
	shim_programs(NULL, NULL);
	errno = saved;
}

static void init_once_fn(void)
{
	int saved = errno;
	uint64_t t0 = now_ns();
	session_dir = getenv("AIRLOCK_DIR");
	const char *log = session_dir ? NULL : getenv("AIRLOCK_LOG");
	const char *image_env = session_dir ? NULL : getenv("AIRLOCK_IMAGE");
	/* a copy: the program may change its environment before the first decision */
	if (image_env && shim_join(image_copy, sizeof image_copy, image_env, (char *)NULL))
		image_path = image_copy;
	else if (image_env)
		image_path = "(too long)";
	tripwire = !session_dir && (image_env || log);
	resolve_exec_family();
	init_env(session_dir);
	if (tripwire)
		init_tripwire(log);
	shim_report_init(session_dir);
	pthread_atfork(warm_before_fork, NULL, NULL);
	init_ns = now_ns() - t0;
	errno = saved;
}

static pthread_once_t proxy_once = PTHREAD_ONCE_INIT;
static bool behind_proxy;

/* The launcher marks a session whose egress goes through its proxy with a file in the session dir. */
static void proxy_once_fn(void)
{
	char path[4096];
	int saved = errno;
	behind_proxy = session_dir && shim_join(path, sizeof path, session_dir, "/proxy", (char *)NULL) &&
		       syscall(SYS_faccessat, AT_FDCWD, path, F_OK, 0) == 0;
	errno = saved;
}

bool shim_behind_proxy(void)
{
	shim_init();
	pthread_once(&proxy_once, proxy_once_fn);
	return behind_proxy;
}

static void image_once_fn(void)
{
	char path[4096], err[256] = "";
	int saved = errno;
	uint64_t t0 = now_ns();
	if (tripwire) {
		if (image_path && image_path[0] == '/')
			map_image(image_path, err, sizeof err);
		else
			shim_join(err, sizeof err, image_path ? "AIRLOCK_IMAGE is not an absolute path"
							      : "AIRLOCK_IMAGE is not set",
				  (char *)NULL);
		/* no launcher to notice: said once, on the first decision of each process */
		char msg[4600];
		if (!image && shim_join(msg, sizeof msg, "airlock: cannot use the policy image ",
					image_path ? image_path : "", ": ", err,
					": every action is refused\n", (char *)NULL))
			(void)syscall(SYS_write, 2, msg, strlen(msg));
	} else if (!session_dir) {
		say_no_image(NULL, "");
	} else if (!shim_join(path, sizeof path, session_dir, "/policy.img", (char *)NULL)) {
		say_no_image(session_dir, "the path is too long");
	} else {
		map_image(path, err, sizeof err);
		if (!image)
			say_no_image(session_dir, err);
	}
	image_ns = now_ns() - t0;
	errno = saved;
}

bool shim_tripwire(void)
{
	shim_init();
	return tripwire;
}

SHIM_EXPORT uint64_t airlock_shim_init_ns(void)
{
	return init_ns;
}

SHIM_EXPORT uint64_t airlock_shim_image_ns(void)
{
	shim_image();
	return image_ns;
}

void shim_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

/* ---- the agent's keys: its own processes only ------------------------------------------ */

static char agent_keys[1024];  /* $AIRLOCK_AGENT_KEYS at start-up: names separated by ':' */
static char agent_exes[8192];  /* $AIRLOCK_AGENT_EXE at start-up: paths separated by ':' */
static bool arg_names_agent;   /* argv[1] is one of agent_exes */
static bool env_names_agent;   /* argv[1] an interpreter's name, argv[2] one of agent_exes */
static bool holds_keys;        /* the agent's own process, holding a key (set before main) */
static pthread_once_t agent_once = PTHREAD_ONCE_INIT;
static bool agent_self;
static pthread_once_t session_agent_once = PTHREAD_ONCE_INIT;
static bool session_agent;     /* the session has an agent profile ($AIRLOCK_DIR/agent exists) */
static char agent_only[4096];  /* its agent-only files, one canonical path a line */

/* True when canon is /proc/PID/environ or /proc/PID/mem (or a task's) of another process. */
static bool other_environ(const char *canon)
{
	if (strncmp(canon, "/proc/", 6) != 0)
		return false;
	const char *p = canon + 6;
	long pid = 0;
	for (int level = 0; level < 2; level++) {
		size_t digits = strspn(p, "0123456789");
		if (!digits || p[digits] != '/')
			return false;
		if (level == 0)
			pid = strtol(p, NULL, 10);
		p += digits + 1;
		if (strcmp(p, "environ") == 0 || strcmp(p, "mem") == 0)
			return pid != (long)getpid();
		if (level == 0 && strncmp(p, "task/", 5) != 0)
			return false;
		p += 5;
	}
	return false;
}

/* The value of NAME=value in environ, name being len bytes; NULL when unset. */
static char *env_value(const char *name, size_t len)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* True when the list (entries separated by sep) holds the n bytes at s (a NULL s never). */
static bool list_has_n(const char *list, char sep, const char *s, size_t n)
{
	const char seps[2] = { sep, '\0' };
	for (const char *p = list; s && n && *p;) {
		size_t len = strcspn(p, seps);
		if (len == n && strncmp(p, s, n) == 0)
			return true;
		p += len + (p[len] == sep);
	}
	return false;
}

/* True when the ':'-separated list holds s (a NULL s never). */
static bool list_has(const char *list, const char *s)
{
	return s && list_has_n(list, ':', s, strlen(s));
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

/*
 * An interpreter that can run the agent's script (argv[1]): node, nodejs, bun,
 * deno (JavaScript agents: Codex's launcher, Gemini), python, python3 and
 * python3.N (aider), and the shells (an agent installed as a wrapper
 * script).  Anything else with the agent's path as argv[1] (`cat AGENT
 * /proc/self/environ`) is not the agent.
 */
static bool interpreter(const char *base)
{
	static const char *const names[] = { "node", "nodejs", "bun", "deno", "python", "python3",
					     "sh", "bash", "dash", NULL };
	if (!base)
		return false;
	for (size_t i = 0; names[i]; i++)
		if (strcmp(base, names[i]) == 0)
			return true;
	return strncmp(base, "python3.", 8) == 0 && base[8] &&
	       strspn(base + 8, "0123456789") == strlen(base + 8);
}

/*
 * True when a program (exe: its path, resolved) run with argv is one of the
 * agent's own: exe is one of agent_exes, or exe is an interpreter and
 * argv[1] one of them, or exe is env(1) running an interpreter with the
 * agent's script (argv[2]), as a `#!/usr/bin/env node` line does.
 */
static bool agent_program(const char *exe, bool arg1, bool arg2)
{
	const char *base = base_name(exe);
	return list_has(agent_exes, exe) || (arg1 && interpreter(base)) ||
	       (arg2 && base && strcmp(base, "env") == 0);
}

/* argv[1] / argv[2] name the agent's script, as agent_program() reads them. */
static void agent_args(char *const argv[], bool *arg1, bool *arg2)
{
	*arg1 = argv && argv[0] && list_has(agent_exes, argv[1]);
	*arg2 = argv && argv[0] && argv[1] && interpreter(base_name(argv[1])) &&
		list_has(agent_exes, argv[2]);
}

static void agent_once_fn(void)
{
	char self[4096];
	int saved = errno;
	long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", self, sizeof self - 1);
	if (n > 0 && agent_exes[0]) {
		self[n] = '\0';
		agent_self = agent_program(self, arg_names_agent, env_names_agent);
	}
	errno = saved;
}

/* This process is the agent's own (decided once, on first need: one readlink). */
static bool is_agent(void)
{
	pthread_once(&agent_once, agent_once_fn);
	return agent_self;
}

bool shim_holds_keys(void)
{
	return holds_keys;
}

bool shim_agent_target(const char *path, const char *canon, char *const argv[])
{
	bool arg1, arg2;
	agent_args(argv, &arg1, &arg2);
	return list_has(agent_exes, path) || agent_program(canon, arg1, arg2);
}

/* True when the NAME=value entry names one of the agent's key variables. */
static bool key_entry(const char *entry)
{
	size_t len = strcspn(entry, "=");
	return entry[len] == '=' && list_has_n(agent_keys, ':', entry, len);
}

/*
 * The launcher's mark that the session runs an agent profile: the file
 * $AIRLOCK_DIR/agent (read-only in the sandbox) listing the profile's
 * agent-only files.  Read once, on the first file decision that needs it,
 * so that dropping a variable (env -u) does not lift the refusals below.
 */
static void session_agent_fn(void)
{
	char path[4096];
	int saved = errno;
	if (session_dir && shim_join(path, sizeof path, session_dir, "/agent", (char *)NULL)) {
		int fd = raw_open(path, O_RDONLY);
		if (fd >= 0) {
			session_agent = true;
			long n = syscall(SYS_read, fd, agent_only, sizeof agent_only - 1);
			agent_only[n > 0 ? n : 0] = '\0';
			syscall(SYS_close, fd);
		}
	}
	errno = saved;
}

/*
 * Reading canon is the agent's alone: another process's environ or mem, or
 * one of the profile's agent-only files (credentials), in a session with an
 * agent profile, from a process that is not the agent's own.
 */
static bool agent_only_read(const char *canon, size_t len, unsigned action)
{
	bool environ_file = other_environ(canon);
	if (!environ_file && !(action & POLICY_FILE_READ))
		return false;
	pthread_once(&session_agent_once, session_agent_fn);
	if (!session_agent || (!environ_file && !list_has_n(agent_only, '\n', canon, len)))
		return false;
	return !is_agent();
}

/*
 * An agent profile's key variables ($AIRLOCK_AGENT_KEYS, names separated
 * by ':') stay in the agent's own processes ($AIRLOCK_AGENT_EXE, paths
 * separated by ':') and leave every other one before main() runs: unset,
 * and the value's bytes overwritten, so /proc/PID/environ does not show
 * them either.  The agent's own process is made non-dumpable, so the
 * programs it runs cannot read them from its /proc/PID/environ.  This is
 * the second layer: the agent's exec hooks already leave the keys out of
 * the environment of any program that is not the agent's own
 * (shim_fix_env), so a child holds them only when the agent is static or
 * makes raw syscalls.  Costs one environment scan when no key is set
 * (every process past the agent's children), no syscall.
 */
static void scrub_agent_keys(int argc, char **argv)
{
	const char *keys = getenv("AIRLOCK_AGENT_KEYS"), *exes = getenv("AIRLOCK_AGENT_EXE");
	bool any = false;
	if (!keys || !shim_join(agent_keys, sizeof agent_keys, keys, (char *)NULL))
		agent_keys[0] = '\0';
	if (!exes || !shim_join(agent_exes, sizeof agent_exes, exes, (char *)NULL))
		agent_exes[0] = '\0'; /* too long: no process is the agent (fail safe) */
	if (argc >= 2)
		agent_args(argv, &arg_names_agent, &env_names_agent);
	for (const char *p = keys; p && *p && !any;) {
		size_t len = strcspn(p, ":");
		any = len && env_value(p, len);
		p += len + (p[len] == ':');
	}
	if (!any)
		return;
	if (is_agent()) {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		holds_keys = true;
		return;
	}
	for (const char *p = keys; *p;) {
		size_t len = strcspn(p, ":");
		char name[256], *value;
		if (len && len < sizeof name && (value = env_value(p, len))) {
			memcpy(name, p, len);
			name[len] = '\0';
			size_t vlen = strlen(value);
			unsetenv(name);
			memset(value, 0, vlen);
		}
		p += len + (p[len] == ':');
	}
}

/* glibc passes main()'s arguments to constructors of preloaded objects too. */
__attribute__((constructor)) static void shim_constructor(int argc, char **argv, char **envp)
{
	(void)envp;
	scrub_agent_keys(argc, argv);
	shim_init();
}

/*
 * The image is mapped and validated by the first call that needs a decision,
 * not by the constructor: most processes a build or a shell starts (true,
 * echo, cc1) exit without making one, and those syscalls and the validation
 * pass were two thirds of the constructor's cost.  Decisions never run
 * without it: no image means deny.
 */
const struct policy_image *shim_image(void)
{
	shim_init();
	pthread_once(&image_once, image_once_fn);
	return image;
}

/* ---- the ruled programs' build-ids ($AIRLOCK_DIR/programs, core/buildid.h) ------------ */

static pthread_once_t programs_once = PTHREAD_ONCE_INIT;
static const char *programs_text;
static size_t programs_len;

static void programs_once_fn(void)
{
	char path[4096];
	struct stat st;
	int saved = errno;
	if (session_dir &&
	    shim_join(path, sizeof path, session_dir, "/" BUILDID_TABLE_NAME, (char *)NULL)) {
		int fd = raw_open(path, O_RDONLY);
		if (fd >= 0) {
			if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof BUILDID_TABLE_HEADER &&
			    st.st_size <= BUILDID_TABLE_MAX) {
				void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
				if (p != MAP_FAILED) {
					programs_text = p;
					programs_len = (size_t)st.st_size;
				}
			}
			syscall(SYS_close, fd);
		}
	}
	errno = saved;
}

bool shim_programs(const char **text, size_t *len)
{
	shim_init();
	pthread_once(&programs_once, programs_once_fn);
	if (text)
		*text = programs_text;
	if (len)
		*len = programs_len;
	return programs_text != NULL;
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

/*
 * Verdict cache: canonical path + action -> verdict, per thread.  The image
 * never changes in a process, so an entry never goes stale; the full path is
 * compared, never just its hash.  It spares a repeated open() the index walk.
 */
#define VCACHE_SLOTS 32
#define VCACHE_PATH 184

struct vslot {
	uint32_t hash;
	uint16_t len; /* 0: empty */
	uint8_t action;
	struct policy_verdict v;
	char path[VCACHE_PATH];
};

/* Mapped on a thread's first file decision (see canon.c: most processes make none). */
static __thread struct vslot *vcache __attribute__((tls_model("initial-exec")));
static __thread int vcache_busy __attribute__((tls_model("initial-exec")));
static pthread_key_t vcache_key;
static pthread_once_t vcache_once = PTHREAD_ONCE_INIT;

static void vcache_unmap(void *p)
{
	munmap(p, VCACHE_SLOTS * sizeof(struct vslot));
}

static void vcache_key_init(void)
{
	if (pthread_key_create(&vcache_key, vcache_unmap) != 0)
		vcache_key = (pthread_key_t)-1;
}

static struct vslot *vcache_get(void)
{
	if (vcache)
		return vcache;
	void *p = mmap(NULL, VCACHE_SLOTS * sizeof(struct vslot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	pthread_once(&vcache_once, vcache_key_init);
	if (vcache_key != (pthread_key_t)-1)
		pthread_setspecific(vcache_key, p);
	vcache = p;
	return vcache;
}

static uint32_t vcache_hash(const char *p, size_t len, unsigned action)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 4 + action), w;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h >> 32);
}

/* The verdict for (path, one action bit), from the cache or the image. */
static struct policy_verdict decide_cached(const struct policy_image *img, const char *path,
					   size_t len, unsigned bit)
{
	uint32_t h = vcache_hash(path, len, bit);
	/* a signal handler that interrupts an update must not read half a slot */
	bool usable = len < VCACHE_PATH && !vcache_busy && vcache_get() != NULL;
	struct vslot *slot = usable ? &vcache[h % VCACHE_SLOTS] : NULL;
	if (usable && slot->len == len && slot->hash == h && slot->action == bit &&
	    memcmp(slot->path, path, len) == 0)
		return slot->v;
	struct policy_verdict v = policy_decide_open(img, path, bit);
	if (usable) {
		vcache_busy = 1;
		slot->len = 0;
		slot->hash = h;
		slot->action = (uint8_t)bit;
		slot->v = v;
		memcpy(slot->path, path, len);
		slot->len = (uint16_t)len;
		vcache_busy = 0;
	}
	return v;
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
		if (!shim_join(canon, sizeof canon, path, (char *)NULL))
			return POLICY_DENY;
		n = (int)strlen(canon);
	}
	/* O_RDWR is a read and a write: the most severe verdict decides */
	a.v = (struct policy_verdict){ POLICY_DENY, -1 };
	const struct policy_image *img = shim_image();
	if (agent_only_read(canon, (size_t)n, action)) {
		/* the rule that allows it (the profile's, naming it) is logged with the refusal */
		a.action = action & POLICY_FILE_READ ? POLICY_FILE_READ : action & -action;
		if (img && a.action == POLICY_FILE_READ)
			a.v.rule = decide_cached(img, canon, (size_t)n, POLICY_FILE_READ).rule;
		return shim_resolve(&a);
	}
	for (unsigned bit = POLICY_FILE_READ; img && bit <= POLICY_FILE_EXEC; bit <<= 1) {
		if (!(action & bit))
			continue;
		struct policy_verdict v = decide_cached(img, canon, (size_t)n, bit);
		if (bit == (action & -action) || v.decision > a.v.decision) {
			a.v = v;
			a.action = bit;
		}
	}
	return shim_resolve(&a);
}

/*
 * Bounds of the walk below a directory being renamed (shim_file_move): more
 * entries, or a deeper tree, and the move is refused rather than half
 * decided — unless the session has a kernel layer (the launcher's mark
 * $AIRLOCK_DIR/kernel), whose masks hide what deny-read rules named at
 * launch wherever the tree goes: then a tree past the bounds is moved (an
 * agent's `mv node_modules old` is not refused for its size).  A decision is
 * a cached image lookup (about a microsecond), so the worst case is tens of
 * milliseconds, once per rename of a large tree.
 */
#define MOVE_WALK_ENTRIES 65536
#define MOVE_WALK_DEPTH 32

/* The session has a kernel layer: the launcher's mark $AIRLOCK_DIR/kernel exists (looked up each time: rare). */
static bool kernel_layer(void)
{
	char path[4096];
	int saved = errno;
	bool yes = false;
	if (session_dir && shim_join(path, sizeof path, session_dir, "/kernel", (char *)NULL)) {
		int fd = raw_open(path, O_RDONLY);
		if (fd >= 0) {
			yes = true;
			syscall(SYS_close, fd);
		}
	}
	errno = saved;
	return yes;
}

/* The read verdict on canon (len bytes): an agent-only file reads as denied by its rule. */
static struct policy_verdict read_verdict(const struct policy_image *img, const char *canon,
					  size_t len)
{
	if (!img)
		return (struct policy_verdict){ POLICY_DENY, -1 };
	struct policy_verdict v = decide_cached(img, canon, len, POLICY_FILE_READ);
	if (agent_only_read(canon, len, POLICY_FILE_READ))
		v.decision = POLICY_DENY;
	return v;
}

/*
 * Appends "/name" to the path of len bytes in buf (cap bytes); the new
 * length, or 0 when it does not fit.
 */
static size_t path_push(char *buf, size_t len, size_t cap, const char *name)
{
	size_t n = strlen(name);
	if (len + 1 + n + 1 > cap)
		return 0;
	buf[len] = '/';
	memcpy(buf + len + 1, name, n + 1);
	return len + 1 + n;
}

/* Closes the fds of the walk's levels 0..level. */
static void walk_close(const int *fds, int level)
{
	for (int i = 0; i <= level; i++)
		syscall(SYS_close, fds[i]);
}

/*
 * Walks the directory src (canonical, slen bytes, in a buffer of cap bytes)
 * as if moved to dst (dlen bytes, same cap): the first entry below it whose
 * read verdict is not allow while its name under dst is read-allowed or
 * less strictly kept, left in src with *v its verdict (true); false when
 * none is.  Not a directory (or a symlink, or gone): false at once.  An
 * entry that cannot be listed or opened, a name too long, or a tree past
 * the bounds: true with src unchanged and *v a deny by no rule (the walk
 * refuses what it cannot see).  Raw syscalls, no allocation.
 */
static bool walk_finds(const struct policy_image *img, char *src, size_t slen, char *dst,
		       size_t dlen, size_t cap, struct policy_verdict *v)
{
	int fds[MOVE_WALK_DEPTH];
	size_t sl[MOVE_WALK_DEPTH], dl[MOVE_WALK_DEPTH];
	char buf[2048] __attribute__((aligned(8)));
	const struct policy_verdict unseen = { POLICY_DENY, -1 };
	long entries = 0;
	int level = 0;
	fds[0] = (int)syscall(SYS_openat, AT_FDCWD, src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fds[0] < 0) {
		/* a file, a symlink, or no such name: nothing is below it */
		if (errno == ENOTDIR || errno == ELOOP || errno == ENOENT)
			return false;
		*v = unseen;
		return true;
	}
	sl[0] = slen;
	dl[0] = dlen;
	for (;;) {
		long n = syscall(SYS_getdents64, fds[level], buf, sizeof buf);
		if (n < 0)
			goto refuse;
		if (n == 0) {
			syscall(SYS_close, fds[level]);
			if (level == 0)
				return false;
			level--;
			continue;
		}
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			if (++entries > MOVE_WALK_ENTRIES)
				goto past_bounds;
			size_t s = path_push(src, sl[level], cap, d->d_name);
			size_t t = path_push(dst, dl[level], cap, d->d_name);
			if (!s || !t)
				goto refuse;
			struct policy_verdict e = read_verdict(img, src, s);
			if (e.decision != POLICY_ALLOW &&
			    read_verdict(img, dst, t).decision < e.decision) {
				walk_close(fds, level);
				*v = e;
				return true;
			}
			if (d->d_type != DT_DIR && d->d_type != DT_UNKNOWN)
				continue;
			int fd = (int)syscall(SYS_openat, fds[level], d->d_name,
					      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				if (errno == ENOTDIR || errno == ELOOP || errno == ENOENT)
					continue;
				goto refuse;
			}
			/* resume the parent after this entry when the child is done */
			if (level + 1 >= MOVE_WALK_DEPTH) {
				syscall(SYS_close, fd);
				goto past_bounds;
			}
			if (syscall(SYS_lseek, fds[level], d->d_off, SEEK_SET) < 0) {
				syscall(SYS_close, fd);
				goto refuse;
			}
			level++;
			fds[level] = fd;
			sl[level] = s;
			dl[level] = t;
			break;
		}
	}
past_bounds:
	if (kernel_layer()) {
		walk_close(fds, level);
		src[slen] = '\0';
		return false;
	}
refuse:
	walk_close(fds, level);
	src[slen] = '\0';
	*v = unseen;
	return true;
}

/* Canonicalises (dirfd, path) into out (cap bytes), or copies the text when it has no name; length, or -1. */
static int canon_or_text(int dirfd, const char *path, unsigned flags, char *out, size_t cap)
{
	int n = canon_path(dirfd, path, flags, out, cap);
	if (n >= 0)
		return n;
	if (!shim_join(out, cap, path, (char *)NULL))
		return -1;
	return (int)strlen(out);
}

enum policy_decision shim_file_move(int olddirfd, const char *oldpath, int newdirfd,
				    const char *newpath)
{
	char src[4096], dst[4096];
	struct shim_action a = { .source = SHIM_OPEN, .action = POLICY_FILE_READ, .path = src };
	if (!oldpath || !newpath)
		return POLICY_ALLOW; /* the real call fails with EFAULT */
	const struct policy_image *img = shim_image();
	int sn = canon_or_text(olddirfd, oldpath, CANON_NOFOLLOW, src, sizeof src);
	if (sn < 0)
		return POLICY_DENY;
	a.v = read_verdict(img, src, (size_t)sn);
	/* the destination is canonicalised only when needed: not on the hot path (an allowed file) */
	int dn = -1;
	if (a.v.decision != POLICY_ALLOW) {
		dn = canon_or_text(newdirfd, newpath, CANON_NOFOLLOW, dst, sizeof dst);
		if (dn < 0)
			return POLICY_DENY;
		if (read_verdict(img, dst, (size_t)dn).decision < a.v.decision)
			return shim_resolve(&a);
	}
	/* the content below a directory: an ordinary file costs one failed openat(2) here */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, src, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return POLICY_ALLOW;
	syscall(SYS_close, fd);
	if (dn < 0) {
		dn = canon_or_text(newdirfd, newpath, CANON_NOFOLLOW, dst, sizeof dst);
		if (dn < 0)
			return POLICY_DENY;
	}
	struct policy_verdict v;
	if (!walk_finds(img, src, (size_t)sn, dst, (size_t)dn, sizeof src, &v))
		return POLICY_ALLOW;
	a.v = v;
	return shim_resolve(&a);
}

/* True when the NAME=value entry's name is `name` (len bytes, '=' excluded). */
static bool env_is(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* The index in env_keep of the variable the NAME=value entry names, or -1. */
static int keep_index(const char *entry)
{
	for (size_t i = 0; i < nkeep; i++)
		if (strncmp(entry, env_keep[i], keep_name_len[i] + 1) == 0)
			return (int)i;
	return -1;
}

/* True when the entry is one shim_fix_env() leaves out or puts back its own way. */
static bool env_replaced(const char *entry)
{
	return keep_index(entry) >= 0 || (env_drop && env_is(entry, env_drop, strlen(env_drop)));
}

bool shim_env_kept(const char *entry)
{
	return env_is(entry, "LD_PRELOAD", 10) || keep_index(entry) >= 0;
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

char *const *shim_fix_env(char *const envp[], char **out, size_t cap, char *buf, size_t bufsize,
			  bool drop_keys)
{
	size_t n = 0, preload_at = (size_t)-1, keys = 0;
	unsigned seen = 0; /* bit i: env_keep[i] is there, with its value */
	bool has_shim = false, stray = false;
	bool fix = env_preload[0] && nkeep;
	drop_keys = drop_keys && agent_keys[0];
	if (!fix && !drop_keys)
		return envp;
	for (; envp && envp[n]; n++) {
		int k;
		if (drop_keys && key_entry(envp[n])) {
			keys++;
		} else if (env_is(envp[n], "LD_PRELOAD", 10)) {
			preload_at = n;
			has_shim = preload_has_shim(envp[n] + 11);
		} else if ((k = keep_index(envp[n])) >= 0 && strcmp(envp[n], env_keep[k]) == 0 &&
			   !(seen & (1u << k))) {
			seen |= 1u << k;
		} else if (env_replaced(envp[n])) {
			stray = true; /* changed, repeated, or one children must not carry */
		}
	}
	if ((has_shim && seen == (1u << nkeep) - 1 && !stray) || !fix) {
		if (!keys)
			return envp;
		if (n + 1 > cap)
			return NULL;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (!key_entry(envp[i]))
				out[k++] = envp[i];
		out[k] = NULL;
		return out;
	}
	if (n + 2 + nkeep > cap)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == preload_at || env_replaced(envp[i]) || (drop_keys && key_entry(envp[i])))
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
	for (size_t i = 0; i < nkeep; i++)
		out[k++] = env_keep[i];
	out[k] = NULL;
	return out;
}
