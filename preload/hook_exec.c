/* hook_exec.c — the shim's exec hooks: every libc path that starts a program, decided before the program starts. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/buildid.h"
#include "core/canon.h"
#include "core/loader.h"
#include "core/pathsearch.h"
#include "preload/shim.h"

#define PATH_BUF 4096
#define STACK_ENV 1024 /* environment entries handled on the stack; more go to mmap(2) */
#define STACK_ARGS 1024

extern char **environ;

/* ---- deciding ------------------------------------------------------------------- */

/*
 * A copy or hard link of a program the policy's exec rules name, started
 * under another name (`cp /usr/bin/git ./g; ./g push`): when canon (the
 * file that runs) is not itself one of the session table's files and its
 * GNU build-id is one of the table's, the command is decided again as each
 * program of that build-id (its path as the rules name it, argv as given).
 * Such a verdict replaces a->v only when it comes from a rule and is more
 * severe (an ask or deny): a build-id is only a note in the file, which
 * anyone can forge, so it may make a decision stricter, never looser.  Then
 * that program's path goes to copy_of (cap bytes) and a->copy_of points at
 * it.  Cost when the table is not empty: one open(2), two or three
 * pread(2)s and a close(2); a file that cannot be read has no build-id.
 * canon NULL: the file is fd's (fexecve of a file with no path, a memfd).
 */
static void decide_copy(const struct policy_image *img, const char *canon, int fd,
			char *const argv[], struct shim_action *a, char *copy_of, size_t cap)
{
	const char *t;
	size_t tl, pos = 0, cl = canon ? strlen(canon) : 0;
	struct buildid_entry e;
	uint8_t id[BUILDID_MAX];
	char hex[2 * BUILDID_MAX + 1];
	if (!shim_programs(&t, &tl))
		return;
	/* the ruled file itself, or a symlink to it: its names decide, and a multi-call
	   binary started as another of its names is that other program */
	while (canon && buildid_table_next(t, tl, &pos, &e))
		if (e.real_len == cl && memcmp(e.real, canon, cl) == 0)
			return;
	int n = canon ? buildid_read_path(canon, id, sizeof id) : buildid_read_fd(fd, id, sizeof id);
	if (n <= 0 || !buildid_hex(id, (size_t)n, hex, sizeof hex))
		return;
	size_t hl = (size_t)n * 2;
	for (pos = 0; buildid_table_next(t, tl, &pos, &e);) {
		if (e.id_len != hl || memcmp(e.id, hex, hl) != 0 || e.path_len >= cap)
			continue;
		char prog[PATH_BUF];
		memcpy(prog, e.path, e.path_len);
		prog[e.path_len] = '\0';
		struct policy_verdict w = policy_decide_exec(img, prog, (const char *const *)argv);
		if (w.rule >= 0 && w.decision > a->v.decision) {
			a->v = w;
			memcpy(copy_of, prog, e.path_len + 1);
			a->copy_of = copy_of;
		}
	}
}

/*
 * Decides starting `path` (relative to dirfd, canon_flags CANON_*) with argv.
 * Command rules see the path as invoked, made absolute; file exec rules see
 * it canonical (symlinks resolved).  *agent: true when the agent's own
 * process, holding its keys, starts itself again (shim_agent_target), so the
 * keys go along; false otherwise.
 */
static enum policy_decision decide_exec(int dirfd, const char *path, char *const argv[],
					unsigned canon_flags, bool *agent)
{
	char abs[PATH_BUF], canon[PATH_BUF], cwd[PATH_BUF], copy_of[PATH_BUF];
	static char *const no_args[] = { NULL };
	const struct policy_image *img = shim_image();
	*agent = false;
	if (!argv)
		argv = no_args;
	if (!path)
		return POLICY_ALLOW; /* the real call fails with EFAULT */
	/*
	 * Uncached: an exec usually runs in a child forked for it, whose cache
	 * entries (copy-on-write pages) die with the exec a moment later.
	 */
	bool resolved = canon_path(dirfd, path, canon_flags | CANON_NOCACHE, canon, sizeof canon) >= 0;
	if (!resolved)
		snprintf(canon, sizeof canon, "%s", path);
	if (path[0] == '/' || dirfd != AT_FDCWD || syscall(SYS_getcwd, cwd, sizeof cwd) < 0 ||
	    canon_lexical(cwd, path, abs, sizeof abs) < 0)
		snprintf(abs, sizeof abs, "%s", path[0] == '/' ? path : canon);
	/* a descriptor with no path (a memfd): named as the kernel names it, "/memfd:x (deleted)" */
	if (!resolved && path[0] == '\0' && (canon_flags & CANON_EMPTY_PATH) && dirfd >= 0) {
		char link[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
		long n = syscall(SYS_readlinkat, AT_FDCWD, link, abs, sizeof abs - 1);
		abs[n > 0 ? n : 0] = '\0';
	}
	if (img && argv[0] && loader_is(canon)) {
		size_t i = loader_program((const char *const *)argv);
		if (i)
			return decide_exec(AT_FDCWD, argv[i], argv + i, 0, agent);
	}
	if (shim_holds_keys())
		*agent = shim_agent_target(abs, canon, argv);
	/*
	 * A program that does not exist is not started: let the real call fail
	 * with ENOENT rather than ask a human about each PATH entry a shell tries.
	 */
	if (resolved && syscall(SYS_faccessat, AT_FDCWD, canon, F_OK, 0) < 0 &&
	    (errno == ENOENT || errno == ENOTDIR))
		return POLICY_ALLOW;
	struct shim_action a = { .source = SHIM_EXEC, .path = abs,
				 .argv = (const char *const *)argv };
	a.v = (struct policy_verdict){ POLICY_DENY, -1 };
	if (img) {
		/* as invoked, and as resolved: a symlink must not rename a denied program */
		a.v = policy_decide_exec(img, abs, (const char *const *)argv);
		if (strcmp(abs, canon) != 0)
			a.v = policy_verdict_stricter(
				a.v, policy_decide_exec(img, canon, (const char *const *)argv));
		if (resolved)
			decide_copy(img, canon, -1, argv, &a, copy_of, sizeof copy_of);
		/*
		 * fexecve(3) / execveat(AT_EMPTY_PATH) of a file with no path to
		 * resolve (a memfd the program wrote a copy of git into): the
		 * build-id read through the descriptor itself (pread: its offset
		 * stays)
		 */
		else if ((canon_flags & CANON_EMPTY_PATH) && path[0] == '\0' && dirfd >= 0)
			decide_copy(img, NULL, dirfd, argv, &a, copy_of, sizeof copy_of);
	}
	return shim_resolve(&a);
}

/* ---- the environment ------------------------------------------------------------- */

/* Room for a fixed environment: on the stack when small, else an anonymous mapping. */
struct env_room {
	char **vec;
	size_t cap;
	size_t mapped; /* bytes to munmap, 0 when on the stack */
	char preload[PATH_BUF * 2];
};

static size_t count(char *const v[])
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

/* envp fixed by shim_fix_env (drop_keys: without the agent's keys), in r's room. */
static char *const *fixed_env(char *const envp[], struct env_room *r, char **stack, size_t scap,
			      bool drop_keys)
{
	size_t need = count(envp) + SHIM_ENV_EXTRA;
	r->vec = stack;
	r->cap = scap;
	r->mapped = 0;
	if (need > scap) {
		size_t bytes = need * sizeof(char *);
		void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return drop_keys ? NULL : envp;
		r->vec = m;
		r->cap = need;
		r->mapped = bytes;
	}
	char *const *e = shim_fix_env(envp, r->vec, r->cap, r->preload, sizeof r->preload,
				      drop_keys);
	/* no room for the fixed copy: a program that would get the keys does not start */
	return e ? e : drop_keys ? NULL : envp;
}

static void env_done(struct env_room *r)
{
	if (r->mapped)
		munmap(r->vec, r->mapped);
}

/* ---- PATH search, as execvp(3) and posix_spawnp(3) do it -------------------------- */

/* Decides an execvp-style start of file: searched along PATH when it has no '/'. */
static enum policy_decision decide_execp(const char *file, char *const argv[], bool *agent)
{
	char found[PATH_BUF];
	/* the search `airlock run` and `airlock check` resolve a command name with (core/pathsearch.h) */
	if (file && !strchr(file, '/') && file[0] &&
	    path_search(file, getenv("PATH"), found, sizeof found) > 0)
		return decide_exec(AT_FDCWD, found, argv, 0, agent);
	return decide_exec(AT_FDCWD, file, argv, 0, agent);
}

/* ---- the hooks ----------------------------------------------------------------------- */

#define MISSING(name) SHIM_MISSING(name)

static int refuse(void)
{
	errno = EACCES;
	return -1;
}

/* One exec call, whichever entry point it came through. */
enum exec_kind { EXEC_VE, EXEC_VPE, EXEC_FD, EXEC_AT };

struct exec_call {
	enum exec_kind kind;
	int dirfd; /* EXEC_FD: the program's fd; EXEC_AT: the directory */
	const char *path;
	char *const *argv;
	char *const *envp;
	int flags; /* EXEC_AT */
};

static enum policy_decision decide_call(const struct exec_call *c, bool *agent)
{
	switch (c->kind) {
	case EXEC_VE:
		return decide_exec(AT_FDCWD, c->path, c->argv, 0, agent);
	case EXEC_VPE:
		return decide_execp(c->path, c->argv, agent);
	case EXEC_FD:
		return decide_exec(c->dirfd, "", c->argv, CANON_EMPTY_PATH, agent);
	default:
		return decide_exec(c->dirfd, c->path, c->argv,
				   ((c->flags & AT_EMPTY_PATH) ? CANON_EMPTY_PATH : 0) |
					   ((c->flags & AT_SYMLINK_NOFOLLOW) ? CANON_NOFOLLOW : 0),
				   agent);
	}
}

static int call_real(const struct exec_call *c, char *const *env)
{
	switch (c->kind) {
	case EXEC_VE:
		return real_execve(c->path, c->argv, env);
	case EXEC_VPE:
		return real_execvpe(c->path, c->argv, env);
	case EXEC_FD:
		return real_fexecve(c->dirfd, c->argv, env);
	default:
		return real_execveat(c->dirfd, c->path, c->argv, env, c->flags);
	}
}

/*
 * Decides the call, then makes it with the environment the shim needs
 * restored.  The guard is left before the real call: in a vfork child the
 * exec replaces the process, and the parent must find its guard clear.
 */
static int guarded_exec(const struct exec_call *c)
{
	if (!shim_enter())
		return call_real(c, c->envp);
	int saved = errno;
	bool agent;
	enum policy_decision d = decide_call(c, &agent);
	char *stack[STACK_ENV];
	struct env_room room;
	room.mapped = 0;
	char *const *env = d == POLICY_ALLOW ? fixed_env(c->envp, &room, stack, STACK_ENV,
							 shim_holds_keys() && !agent)
					     : NULL;
	shim_leave();
	if (d != POLICY_ALLOW || !env) {
		env_done(&room);
		return refuse();
	}
	errno = saved;
	int r = call_real(c, env);
	saved = errno;
	env_done(&room);
	errno = saved;
	return r;
}

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
	if (MISSING(execve)) {
		errno = ENOSYS;
		return -1;
	}
	struct exec_call c = { .kind = EXEC_VE, .path = path, .argv = argv, .envp = envp };
	return guarded_exec(&c);
}

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(path, argv, envp);
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	return do_execve(path, argv, environ);
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (MISSING(execvpe)) {
		errno = ENOSYS;
		return -1;
	}
	struct exec_call c = { .kind = EXEC_VPE, .path = file, .argv = argv, .envp = envp };
	return guarded_exec(&c);
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_execvpe(file, argv, environ);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_execvpe(file, argv, envp);
}

/*
 * The execl family: gathers the variadic arguments into argv (on the stack,
 * or an anonymous mapping past STACK_ARGS) and continues as execve/execvp.
 */
#define GATHER_ARGS(first, last_named, with_envp, call)                                    \
	do {                                                                             \
		va_list ap, aq;                                                          \
		size_t n = 1;                                                            \
		va_start(ap, last_named);                                                \
		va_copy(aq, ap);                                                         \
		while (va_arg(aq, const char *))                                         \
			n++;                                                             \
		va_end(aq);                                                              \
		char *stack_argv[STACK_ARGS];                                            \
		char **av = stack_argv;                                                  \
		size_t bytes = (n + 1) * sizeof(char *);                                 \
		if (n + 1 > STACK_ARGS) {                                                \
			av = mmap(NULL, bytes, PROT_READ | PROT_WRITE,                   \
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);                   \
			if (av == MAP_FAILED) {                                          \
				va_end(ap);                                              \
				errno = E2BIG;                                           \
				return -1;                                               \
			}                                                                \
		}                                                                        \
		av[0] = (char *)(first);                                                 \
		for (size_t i = 1; i < n; i++)                                           \
			av[i] = va_arg(ap, char *);                                      \
		av[n] = NULL;                                                            \
		char *const *envp = with_envp ? va_arg(ap, char *const *) : environ;     \
		va_end(ap);                                                              \
		int r = call;                                                            \
		if (av != stack_argv) {                                                  \
			int saved = errno;                                               \
			munmap(av, bytes);                                               \
			errno = saved;                                                   \
		}                                                                        \
		return r;                                                                \
	} while (0)

SHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
	GATHER_ARGS(arg, arg, false, do_execve(path, av, envp));
}

SHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	GATHER_ARGS(arg, arg, false, do_execvpe(file, av, envp));
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
	GATHER_ARGS(arg, arg, true, do_execve(path, av, envp));
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (MISSING(fexecve)) {
		errno = ENOSYS;
		return -1;
	}
	struct exec_call c = { .kind = EXEC_FD, .dirfd = fd, .argv = argv, .envp = envp };
	return guarded_exec(&c);
}

SHIM_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	if (MISSING(execveat)) {
		errno = ENOSYS;
		return -1;
	}
	struct exec_call c = { .kind = EXEC_AT, .dirfd = dirfd, .path = path, .argv = argv,
			       .envp = envp, .flags = flags };
	return guarded_exec(&c);
}

/* posix_spawn(3) execs in a child libc makes itself, past our hooks: decide in the caller. */
static int do_spawn(bool search, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (search ? MISSING(posix_spawnp) : MISSING(posix_spawn))
		return ENOSYS;
	posix_spawn_fn real = search ? real_posix_spawnp : real_posix_spawn;
	if (!shim_enter())
		return real(pid, path, fa, attr, argv, envp);
	int saved = errno;
	char dir[PATH_BUF], joined[PATH_BUF * 2];
	const char *p = path;
	/* after a chdir file action the child runs a relative program from there */
	if (path && path[0] != '/' && (!search || strchr(path, '/')) &&
	    shim_spawn_dir(fa, dir, sizeof dir) &&
	    shim_join(joined, sizeof joined, dir, "/", path, (char *)NULL))
		p = joined;
	bool agent;
	enum policy_decision d = search && p == path ? decide_execp(path, argv, &agent)
						     : decide_exec(AT_FDCWD, p, argv, 0, &agent);
	char *stack[STACK_ENV];
	struct env_room room;
	room.mapped = 0;
	char *const *env = d == POLICY_ALLOW ? fixed_env(envp, &room, stack, STACK_ENV,
							 shim_holds_keys() && !agent)
					     : NULL;
	shim_leave();
	errno = saved;
	if (d != POLICY_ALLOW || !env) {
		env_done(&room);
		return EACCES;
	}
	int r = real(pid, path, fa, attr, argv, env);
	env_done(&room);
	errno = saved;
	return r;
}

SHIM_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return do_spawn(false, pid, path, fa, attr, argv, envp);
}

SHIM_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return do_spawn(true, pid, file, fa, attr, argv, envp);
}

/*
 * system(3) and popen(3) run "/bin/sh -c command" through libc's own spawn,
 * past our hooks: decide the shell with its command here, and make sure the
 * process environment the shell inherits still carries the shim.
 */
static enum policy_decision decide_shell(const char *command)
{
	char *argv[] = { "sh", "-c", (char *)command, NULL };
	char *stack[STACK_ENV];
	struct env_room room;
	bool agent;
	/* the shell inherits environ as it is: the agent's keys go to it (its shim scrubs them) */
	enum policy_decision d = decide_exec(AT_FDCWD, "/bin/sh", argv, 0, &agent);
	char *const *env = fixed_env(environ, &room, stack, STACK_ENV, false);
	if (d == POLICY_ALLOW && env && env != environ) {
		for (size_t i = 0; env[i]; i++)
			if (shim_env_kept(env[i]))
				putenv(env[i] == room.preload ? strdup(env[i]) : env[i]);
	}
	env_done(&room);
	return d;
}

SHIM_EXPORT int system(const char *command)
{
	if (MISSING(system)) {
		errno = ENOSYS;
		return -1;
	}
	if (!command || !shim_enter())
		return real_system(command);
	int saved = errno;
	enum policy_decision d = decide_shell(command);
	shim_leave();
	if (d != POLICY_ALLOW)
		return refuse();
	errno = saved;
	return real_system(command);
}

SHIM_EXPORT FILE *popen(const char *command, const char *type)
{
	if (MISSING(popen)) {
		errno = ENOSYS;
		return NULL;
	}
	if (!command || !shim_enter())
		return real_popen(command, type);
	int saved = errno;
	enum policy_decision d = decide_shell(command);
	shim_leave();
	if (d != POLICY_ALLOW) {
		errno = EACCES;
		return NULL;
	}
	errno = saved;
	return real_popen(command, type);
}
