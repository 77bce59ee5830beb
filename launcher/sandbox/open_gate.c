/* open_gate.c — deny-read rules at the kernel layer for files that appear during the session: fanotify permission events on the sandbox's mounts (see open_gate.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "launcher/sandbox/masks.h"
#include "launcher/sandbox/open_gate.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct open_gate {
	int fan;
	const struct policy_image *img;
	char *home; /* owned, canonical; NULL: no mandatory list */
	open_gate_refused_fn refused;
	void *ctx;
	struct open_gate_stats st; /* the worker's, read after it stopped (or racily, for counts) */
	/* the worker process answers; the caller's loop hears of refusals and failure through a pipe */
	pid_t worker;
	bool short_of_fds; /* the worker said it is out of descriptors, and has had none since */
	int spare[OPEN_GATE_SPARE_FDS]; /* /dev/null, held so events find descriptors when the
					   launcher runs out (an agent holding connections): -1 when given up */
	int news[2]; /* worker -> caller: struct news records */
	int stop[2]; /* caller -> worker: a byte (or its closing) says stop */
};

/* (Re)takes the spare descriptors it can. */
static void spares_take(struct open_gate *g)
{
	for (int i = 0; i < OPEN_GATE_SPARE_FDS; i++)
		if (g->spare[i] < 0)
			g->spare[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Gives the spare descriptors back: the next read's events can have them.  False: there were none. */
static bool spares_give(struct open_gate *g)
{
	bool any = false;
	for (int i = 0; i < OPEN_GATE_SPARE_FDS; i++)
		if (g->spare[i] >= 0) {
			close(g->spare[i]);
			g->spare[i] = -1;
			any = true;
		}
	return any;
}

/* A record on the news pipe: a refusal (err 0, path follows, len bytes) or the worker's end (err < 0). */
struct news {
	int err;
	pid_t pid;
	int32_t rule;
	uint32_t len;
};

/*
 * The group: a permission class (FAN_CLASS_PRE_CONTENT, the highest
 * priority, so no other listener answers before us; the class exists since
 * fanotify itself), non-blocking, event descriptors read-only; unlimited
 * marks (CAP_SYS_ADMIN, which the class needs anyway): the ignore marks are
 * bounded by OPEN_GATE_MAX_IGNORES here instead.
 */
static int group_new(void)
{
	/*
	 * FAN_UNLIMITED_QUEUE: with the default 16,384 events a full queue
	 * lets an open through unasked (fanotify(7)); the waiting openers
	 * bound it instead (each is a blocked thread of the sandbox's).
	 */
	return fanotify_init(FAN_CLASS_PRE_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_MARKS |
				     FAN_UNLIMITED_QUEUE,
			     O_RDONLY | O_LARGEFILE | O_CLOEXEC);
}

int open_gate_probe(char *why, size_t whylen)
{
	int fd = group_new();
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	int e = errno;
	if (e == EPERM)
		snprintf(why, whylen, "fanotify permission events need CAP_SYS_ADMIN (airlock run as root)");
	else
		snprintf(why, whylen, "this kernel has no fanotify permission events (%s; "
			 "CONFIG_FANOTIFY_ACCESS_PERMISSIONS)", strerror(e));
	return -e;
}

struct open_gate *open_gate_new(const struct policy_image *img, const char *home,
				open_gate_refused_fn refused, void *ctx, char *err, size_t errlen)
{
	char canon[PATH_MAX];
	struct open_gate *g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*g = (struct open_gate){ .fan = -1, .img = img, .refused = refused, .ctx = ctx,
				 .news = { -1, -1 }, .stop = { -1, -1 } };
	for (int i = 0; i < OPEN_GATE_SPARE_FDS; i++)
		g->spare[i] = -1;
	spares_take(g);
	if (pipe2(g->news, O_CLOEXEC) != 0 || pipe2(g->stop, O_CLOEXEC) != 0 ||
	    fcntl(g->news[0], F_SETFL, O_NONBLOCK) != 0) {
		snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
		open_gate_free(g);
		return NULL;
	}
	if (home && realpath(home, canon) && !(g->home = strdup(canon))) {
		free(g);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((g->fan = group_new()) < 0) {
		int e = errno;
		open_gate_probe(err, errlen);
		open_gate_free(g);
		errno = e;
		return NULL;
	}
	return g;
}

/* ---- marking the sandbox's mounts --------------------------------------------------------- */

/* File systems with no files a secret could be in (or none of the host's): never marked. */
static bool pseudo_fs(const char *type)
{
	static const char *const pseudo[] = {
		"proc",	   "sysfs",   "devtmpfs",  "devpts",   "mqueue", "cgroup",	  "cgroup2",
		"securityfs", "debugfs", "tracefs",   "pstore",	  "bpf",    "configfs", "fusectl",
		"hugetlbfs", "binfmt_misc", "autofs", "nsfs",	  "efivarfs", "rpc_pipefs",
	};
	for (size_t i = 0; i < NELEM(pseudo); i++)
		if (strcmp(type, pseudo[i]) == 0)
			return true;
	return false;
}

/* mountinfo's octal escapes (\040 for a space, proc(5)) undone in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* One mountinfo line's mount id, device, mount point (unescaped, in place) and type.  False: malformed. */
static bool mount_fields(char *line, unsigned long long *id, dev_t *dev, char **point, char **type)
{
	unsigned maj, min;
	char *save = NULL, *f[5];
	for (int i = 0; i < 5; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " \n", &save)))
			return false;
	if (sscanf(f[2], "%u:%u", &maj, &min) != 2 || sscanf(f[0], "%llu", id) != 1)
		return false;
	char *sep;
	while ((sep = strtok_r(NULL, " \n", &save)) && strcmp(sep, "-") != 0)
		;
	if (!sep || !(*type = strtok_r(NULL, " \n", &save)))
		return false;
	*dev = makedev(maj, min);
	unescape(f[4]);
	*point = f[4];
	return true;
}

/* The devices of this process's own mounts: the host's file systems. */
static dev_t *host_devices(size_t *n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *point, *type;
	size_t cap = 0, len = 0, lcap = 0;
	dev_t *devs = NULL, d;
	unsigned long long id;
	while (f && getline(&line, &lcap, f) > 0) {
		if (!mount_fields(line, &id, &d, &point, &type) || pseudo_fs(type))
			continue;
		if (len == cap) {
			dev_t *m = realloc(devs, (cap = cap ? cap * 2 : 64) * sizeof *m);
			if (!m)
				break;
			devs = m;
		}
		devs[len++] = d;
	}
	free(line);
	if (f)
		fclose(f);
	*n = len;
	return devs;
}

static bool has_dev(const dev_t *devs, size_t n, dev_t d)
{
	for (size_t i = 0; i < n; i++)
		if (devs[i] == d)
			return true;
	return false;
}

/*
 * Marks the mount with this id at where (under /proc/PID/root).  A mount
 * another one covers (bwrap's /run over the host's /run/netns, say) is
 * skipped: no path inside reaches it, and nothing in the sandbox may
 * unmount what covers it.  1: marked, 0: covered, -errno.
 */
static int mark_one(struct open_gate *g, const char *where, unsigned long long id)
{
	struct statx sx;
	if (statx(AT_FDCWD, where, AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) != 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -ENOSYS; /* before Linux 5.8: no way to tell a covered mount */
	if (sx.stx_mnt_id != id)
		return 0;
	if (fanotify_mark(g->fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM, AT_FDCWD, where) != 0)
		return -errno;
	return 1;
}

int open_gate_mark(struct open_gate *g, pid_t pid, char *err, size_t errlen)
{
	char path[64], where[PATH_MAX + 64], *line = NULL, *point, *type;
	size_t ndev = 0, lcap = 0;
	dev_t d;
	unsigned long long id;
	int marked = 0, r = 0;
	snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "cannot read the sandbox's mounts (%s): %s", path, strerror(-r));
		return r;
	}
	dev_t *devs = host_devices(&ndev);
	while (!r && getline(&line, &lcap, f) > 0) {
		if (!mount_fields(line, &id, &d, &point, &type) || pseudo_fs(type) ||
		    !has_dev(devs, ndev, d))
			continue;
		snprintf(where, sizeof where, "/proc/%d/root%s", (int)pid, point);
		int m = mark_one(g, where, id);
		if (m < 0) {
			r = m;
			snprintf(err, errlen, "cannot watch the sandbox's mount %s (%s): %s", point, type,
				 strerror(-r));
			break;
		}
		marked += m;
	}
	free(line);
	free(devs);
	fclose(f);
	if (r)
		return r;
	g->st.mounts += (unsigned long)marked;
	return marked;
}

int open_gate_fd(const struct open_gate *g)
{
	return g ? g->news[0] : -1;
}

/* ---- answering ---------------------------------------------------------------------------- */

/*
 * The opened file's path (fd from the event) into buf; false when it cannot
 * be read whole (longer than PATH_MAX, or not a path): buf then says so,
 * and the open is refused (a rule cannot be checked against it).
 */
static bool event_path(int fd, char *buf, size_t cap)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1 || buf[0] != '/') {
		snprintf(buf, cap, "%s", n < 0 && errno == ENAMETOOLONG
						 ? "(a path longer than PATH_MAX)"
						 : "(a path that cannot be read)");
		return false;
	}
	buf[n] = '\0';
	/* unlinked while being opened: decided by the name it had */
	static const char deleted[] = " (deleted)";
	size_t k = sizeof deleted - 1;
	if ((size_t)n > k && strcmp(buf + n - k, deleted) == 0)
		buf[n - k] = '\0';
	return true;
}

/*
 * FAN_DENY: the opener gets EPERM (fanotify(7)); Linux 6.14's
 * FAN_DENY_ERRNO() takes only a few errnos, and EACCES is not one of them.
 */
static int respond(struct open_gate *g, int fd, bool allow)
{
	struct fanotify_response r = { .fd = fd, .response = allow ? FAN_ALLOW : FAN_DENY };
	if (write(g->fan, &r, sizeof r) == (ssize_t)sizeof r)
		return 0;
	/* ENOENT: the opener went away (killed) before the answer; nothing waits */
	return errno == ENOENT ? 0 : -errno;
}

/* One permission event: decided, answered, and an allowed regular file ignored from now on. */
static int decide(struct open_gate *g, const struct fanotify_event_metadata *m)
{
	char path[PATH_MAX];
	int32_t rule = -1;
	g->st.events++;
	bool named = event_path(m->fd, path, sizeof path);
	bool deny = !named || masks_refuses(g->img, g->home, path, &rule);
	if (!named)
		rule = OPEN_GATE_RULE_NO_PATH;
	int r = respond(g, m->fd, !deny);
	if (deny) {
		g->st.refused++;
		struct news n = { .pid = (pid_t)m->pid, .rule = rule, .len = (uint32_t)strlen(path) };
		/* one writer: header and path stay together; a full pipe stalls the gate, never drops */
		if (write(g->news[1], &n, sizeof n) != (ssize_t)sizeof n ||
		    write(g->news[1], path, n.len) != (ssize_t)n.len)
			return r ? r : -EIO;
		return r;
	}
	/*
	 * Its later opens cost nothing.  The decision is by name, which a write
	 * does not change: the mark survives one (FAN_MARK_IGNORED_SURV_MODIFY),
	 * or a file written and read again, as builds do, would be decided again.
	 */
	if (!r && g->st.ignored < OPEN_GATE_MAX_IGNORES &&
	    fanotify_mark(g->fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY,
			  FAN_OPEN_PERM, m->fd, NULL) == 0)
		g->st.ignored++;
	return r;
}

/*
 * Answers every open waiting now (the group is non-blocking).  0, or
 * -errno: the group failed (-EMFILE / -ENFILE: out of descriptors even
 * after giving the spares back; the kernel refused that open).
 */
static int answer_all(struct open_gate *g)
{
	/* aligned for the metadata records the kernel writes into it */
	struct fanotify_event_metadata buf[256];
	size_t want = sizeof buf;
	for (;;) {
		ssize_t len = read(g->fan, buf, want);
		if (len < 0 && (errno == EMFILE || errno == ENFILE) && spares_give(g)) {
			/* that event was refused by the kernel; the next ones get the spares */
			want = OPEN_GATE_SPARE_FDS * sizeof *buf;
			continue;
		}
		/*
		 * EMFILE / ENFILE: no descriptor for the event's file, so the
		 * kernel has refused that open itself (FAN_DENY, fanotify_read):
		 * closed, not failed; the caller says so and goes on.
		 */
		if (len < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (len == 0)
			return -EIO;
		int r = 0;
		const struct fanotify_event_metadata *m = buf;
		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				return -EPROTO;
			if (m->mask & FAN_Q_OVERFLOW)
				r = r ? r : -EOVERFLOW; /* an open may have gone unasked: fail closed */
			if (m->fd >= 0) {
				if (!r && (m->mask & FAN_OPEN_PERM))
					r = decide(g, m);
				close(m->fd);
			}
		}
		if (r)
			return r;
		spares_take(g);
	}
}

/*
 * The worker: answers opens as they come, in a process of its own, so an
 * open waits only for its own decision, never for the caller's loop (its
 * asks, proxy, log), and its descriptors (one per event) never compete with
 * the caller's (an agent can make the launcher run out of them by holding
 * connections).  It decides from the image (mapped before the fork) and
 * allocates nothing; what it refused goes to the caller through the news
 * pipe.  On failure it says so there and ends.
 */
static void worker(struct open_gate *g)
{
	struct pollfd p[2] = { { g->fan, POLLIN, 0 }, { g->stop[0], POLLIN, 0 } };
	int r = 0;
	while (!r) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[1].revents)
			return;
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			r = -EIO;
		else if (p[0].revents & POLLIN)
			r = answer_all(g);
		if (r == -EMFILE || r == -ENFILE) {
			/* the launcher is out of descriptors (an agent holding connections): said once an episode */
			if (!g->short_of_fds) {
				struct news n = { .err = -r, .rule = OPEN_GATE_RULE_NO_FDS };
				(void)!write(g->news[1], &n, sizeof n);
			}
			g->short_of_fds = true;
			r = 0;
			usleep(2000);
		} else if (!r) {
			g->short_of_fds = false;
		}
	}
	struct news n = { .err = r };
	(void)!write(g->news[1], &n, sizeof n);
}

/*
 * In the worker: the group and the pipe ends it uses moved to 3, 4, 5 and
 * every other descriptor closed (the launcher's channel, sockets, log), then
 * its spares taken anew.  False: it could not.
 */
static bool worker_fds(struct open_gate *g)
{
	int *keep[] = { &g->fan, &g->news[1], &g->stop[0] };
	int top = 0;
	spares_give(g);
	for (size_t i = 0; i < NELEM(keep); i++)
		top = *keep[i] > top ? *keep[i] : top;
	/* above every one first, so that moving one down never lands on another */
	for (size_t i = 0; i < NELEM(keep); i++)
		if ((*keep[i] = fcntl(*keep[i], F_DUPFD_CLOEXEC, top + 1)) < 0)
			return false;
	for (size_t i = 0; i < NELEM(keep); i++) {
		if (dup3(*keep[i], 3 + (int)i, O_CLOEXEC) < 0)
			return false;
		*keep[i] = 3 + (int)i;
	}
	close_range(3 + NELEM(keep), ~0U, 0);
	spares_take(g);
	return true;
}

int open_gate_start(struct open_gate *g)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* the launcher's death ends it (PR_SET_PDEATHSIG); the sandbox dies with it too */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, "airlock-gate");
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		if (!worker_fds(g)) {
			struct news n = { .err = -EMFILE };
			(void)!write(g->news[1], &n, sizeof n);
			_exit(1);
		}
		worker(g);
		_exit(0);
	}
	g->worker = pid;
	/*
	 * The caller keeps the group open too: should the worker die, the
	 * sandbox's opens wait (the group is not closed, which would let them
	 * through) until the caller hears the news pipe close and ends it.
	 */
	close(g->news[1]);
	close(g->stop[0]);
	g->news[1] = g->stop[0] = -1;
	return 0;
}

void open_gate_stop(struct open_gate *g)
{
	if (!g || g->worker <= 0)
		return;
	(void)!write(g->stop[1], "s", 1);
	/* reaped here, or already by the caller's SIGCHLD handling (waitpid(-1)): ECHILD */
	while (waitpid(g->worker, NULL, 0) < 0 && errno == EINTR)
		;
	g->worker = 0;
}

int open_gate_serve(struct open_gate *g)
{
	char path[PATH_MAX];
	struct news n;
	for (;;) {
		ssize_t k = read(g->news[0], &n, sizeof n);
		if (k < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (k == 0)
			return -ECHILD; /* the worker is gone (killed?): fail closed */
		if (k != (ssize_t)sizeof n)
			return -EIO;
		if (n.err < 0)
			return n.err;
		if (n.err > 0) { /* a note: out of descriptors, the kernel refuses opens meanwhile */
			if (g->refused)
				g->refused(g->ctx, 0, "", OPEN_GATE_RULE_NO_FDS);
			continue;
		}
		if (n.len >= sizeof path)
			return -EPROTO;
		/* the path follows its header at once (the worker wrote both): wait for it */
		size_t got = 0;
		while (got < n.len) {
			struct pollfd p = { g->news[0], POLLIN, 0 };
			ssize_t m = read(g->news[0], path + got, n.len - got);
			if (m > 0)
				got += (size_t)m;
			else if (m == 0)
				return -EIO;
			else if (errno != EAGAIN && errno != EINTR)
				return -errno;
			else
				(void)poll(&p, 1, 100);
		}
		path[n.len] = '\0';
		if (g->refused)
			g->refused(g->ctx, n.pid, path, n.rule);
	}
}

struct open_gate_stats open_gate_stats(const struct open_gate *g)
{
	return g ? g->st : (struct open_gate_stats){ 0 };
}

void open_gate_free(struct open_gate *g)
{
	if (!g)
		return;
	open_gate_stop(g);
	spares_give(g);
	if (g->fan >= 0)
		close(g->fan);
	for (int i = 0; i < 2; i++) {
		if (g->news[i] >= 0)
			close(g->news[i]);
		if (g->stop[i] >= 0)
			close(g->stop[i]);
	}
	free(g->home);
	free(g);
}
