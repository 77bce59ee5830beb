/* report.c — the shim's side of the channel: asks the launcher, reports events, guards its own socket. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/channel.h"
#include "preload/shim.h"

#define SCRATCH 16384 /* per message; longer argv is truncated, and the message says so */
#define FD_FLOOR 900  /* the event socket is moved up here, out of the way of the program's fds */

static char chan_path[4096];
static bool trace;
static atomic_int event_fd = -1;
static dev_t event_dev;
static ino_t event_ino;
static atomic_uint next_id;

static pthread_mutex_t connect_lock = PTHREAD_MUTEX_INITIALIZER;

void shim_report_init(const char *dir)
{
	const char *t = getenv("AIRLOCK_TRACE");
	trace = t && strcmp(t, "1") == 0;
	if (!dir || !shim_join(chan_path, sizeof chan_path, dir, "/channel", (char *)NULL))
		chan_path[0] = '\0';
}

/* Connects a socket for events and lifts it to FD_FLOOR or above; -1 on failure. */
static int open_event_socket(struct stat *st)
{
	int fd = channel_connect(chan_path);
	if (fd < 0)
		return -1;
	int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, FD_FLOOR);
	if (high >= 0) {
		syscall(SYS_close, fd);
		fd = high;
	}
	if (fstat(fd, st) != 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	return fd;
}

/*
 * The event socket, connected on first use and shared by every thread and
 * by children (fork and vfork alike): events are datagrams, and the launcher
 * reads each one's sender from its SCM_CREDENTIALS, which the kernel fills
 * in per message.  A program may close every fd it does not know (Python's
 * close_fds) and reuse the number: the socket is used only while its inode
 * is still the one we connected, else a new one is made.
 */
static int event_socket(void)
{
	struct stat st;
	int fd = atomic_load_explicit(&event_fd, memory_order_acquire);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == event_dev && st.st_ino == event_ino)
		return fd;
	pthread_mutex_lock(&connect_lock);
	if (atomic_load(&event_fd) == fd) {
		fd = open_event_socket(&st);
		if (fd >= 0) {
			event_dev = st.st_dev;
			event_ino = st.st_ino;
			atomic_store_explicit(&event_fd, fd, memory_order_release);
		}
	} else {
		fd = atomic_load(&event_fd);
	}
	pthread_mutex_unlock(&connect_lock);
	return fd;
}

void shim_report_warm(void)
{
	if (shim_tripwire())
		shim_tripwire_warm();
	else if (chan_path[0])
		(void)event_socket();
}

static void fill(struct channel_msg *m, const struct shim_action *a)
{
	static const enum channel_source sources[] = { CHANNEL_SOURCE_EXEC, CHANNEL_SOURCE_OPEN,
						       CHANNEL_SOURCE_CONNECT };
	memset(m, 0, sizeof *m);
	/* the pid as this process sees it: the launcher logs it beside the kernel's when they differ
	   (a container's pid namespace) */
	m->flags = CHANNEL_F_PID;
	m->self_pid = (int32_t)syscall(SYS_getpid);
	m->source = sources[a->source];
	m->decision = a->v.decision;
	m->rule = a->v.rule;
	m->decided_by = CHANNEL_BY_POLICY;
	switch (a->source) {
	case SHIM_EXEC:
		m->action = CHANNEL_ACTION_EXEC;
		m->program = a->path;
		m->argv = a->argv;
		while (a->argv && a->argv[m->argc])
			m->argc++;
		if (a->copy_of) {
			m->flags |= CHANNEL_F_COPY;
			m->copy_of = a->copy_of;
		}
		break;
	case SHIM_OPEN:
		m->action = a->action;
		m->path = a->path;
		break;
	default:
		m->action = CHANNEL_ACTION_CONNECT;
		m->host = a->host;
		m->port = (uint16_t)a->port;
	}
}

static void send_event(struct channel_msg *m)
{
	uint8_t scratch[SCRATCH];
	if (!chan_path[0])
		return;
	int fd = event_socket();
	if (fd < 0)
		return;
	m->type = CHANNEL_EVENT;
	(void)channel_send(fd, m, scratch, sizeof scratch);
}

static enum policy_decision ask(struct channel_msg *m)
{
	uint8_t scratch[SCRATCH];
	struct channel_msg answer;
	if (!chan_path[0])
		return POLICY_DENY;
	m->type = CHANNEL_ASK;
	m->id = atomic_fetch_add(&next_id, 1) + 1;
	int r = channel_ask_path(chan_path, m, &answer, scratch, sizeof scratch);
	return r == POLICY_ALLOW ? POLICY_ALLOW : POLICY_DENY;
}

enum policy_decision shim_resolve(struct shim_action *a)
{
	struct channel_msg m;
	enum policy_decision d = a->v.decision;
	if (shim_tripwire())
		return shim_tripwire_resolve(a, trace);
	fill(&m, a);
	if (d == POLICY_ASK)
		return ask(&m);
	if (d == POLICY_DENY || a->source != SHIM_OPEN || trace)
		send_event(&m);
	return d == POLICY_ALLOW ? POLICY_ALLOW : POLICY_DENY;
}
