/* loop_poll.c — the proxy's event loop on poll(2), for any POSIX system: level-triggered, a helper thread behind loop_fd(). */
#include "proxy/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/grow.h"

/*
 * Level-triggered only: poll(2) reports states, and an edge cannot be told
 * from a state that never changed, so LOOP_EDGE is ignored and
 * loop_has_edge() is false; the proxy then restates its interest after
 * every event (proxy/loop.h).
 *
 * poll(2) has no fd of its own that an owner's poll(2) could wait on, so
 * loop_fd() starts a helper thread, the watcher: while armed, it polls a
 * copy of the set plus a "kick" pipe; when a watched fd is ready it writes
 * a byte into the "ready" pipe, whose read end is loop_fd(), and disarms
 * until loop_idle().  loop_wait() always polls the set itself: the
 * watcher only wakes the owner.  A change to the set while the watcher
 * polls an older copy kicks it into polling the new one.
 */

/* One watched fd. */
struct slot {
	int fd;
	unsigned interest; /* LOOP_READ | LOOP_WRITE; 0: not polled */
	void *ptr;
};

struct loop {
	/* the set: slot[] under mu once threaded (the watcher copies it); pfd[] the owner's alone */
	struct slot *slot;
	struct pollfd *pfd; /* pfd[i] polls slot[i]; fd -1 while it has no interest (poll skips it) */
	size_t n, cap;
	int *at;            /* at[fd]: slot index + 1, 0 when fd is not watched */
	size_t nat;
	size_t scan;        /* where loop_wait() looks first: after the last fd it had no room for */
	/* the watcher, from the first loop_fd() on */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ready[2];       /* [0] is loop_fd() */
	int kick[2];
	bool armed;         /* watch: loop_idle() was called since the last "ready" */
	bool watching;      /* in poll(2) on copy[] */
	bool kicked;        /* a byte waits in kick[0] */
	bool quit;
	struct pollfd *copy; /* the watcher's own: kick[0], then the set as it was */
	size_t copy_cap;
};

static short to_poll(unsigned interest)
{
	return (short)(((interest & LOOP_READ) ? POLLIN : 0) | ((interest & LOOP_WRITE) ? POLLOUT : 0));
}

static unsigned from_poll(short re)
{
	return ((re & POLLIN) ? LOOP_READ : 0u) | ((re & POLLOUT) ? LOOP_WRITE : 0u) |
	       ((re & (POLLERR | POLLHUP | POLLNVAL)) ? LOOP_ERROR : 0u);
}

static void lock(struct loop *l)
{
	if (l->threaded)
		pthread_mutex_lock(&l->mu);
}

/* The set changed: a watcher polling an older copy polls again.  Called locked. */
static void unlock_changed(struct loop *l)
{
	if (!l->threaded)
		return;
	if (l->watching && !l->kicked)
		l->kicked = write(l->kick[1], "k", 1) == 1;
	pthread_mutex_unlock(&l->mu);
}

static void drain(int fd)
{
	char buf[64];
	while (read(fd, buf, sizeof buf) > 0)
		;
}

struct loop *loop_new(void)
{
	struct loop *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->ready[0] = l->ready[1] = l->kick[0] = l->kick[1] = -1;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	return l;
}

/* Room for one more slot and for fd in at[].  0 or -ENOMEM. */
static int grow(struct loop *l, int fd)
{
	if ((size_t)fd >= l->nat) {
		size_t nat = l->nat;
		int *at = grow_array(l->at, &nat, (size_t)fd + 1, sizeof *at, 64);
		if (!at)
			return -ENOMEM;
		for (size_t i = l->nat; i < nat; i++)
			at[i] = 0;
		l->at = at;
		l->nat = nat;
	}
	if (l->n < l->cap)
		return 0;
	size_t cap = l->cap; /* pfd[] and slot[] have the same length */
	struct pollfd *pfd = grow_array(l->pfd, &cap, l->n + 1, sizeof *pfd, 16);
	if (!pfd)
		return -ENOMEM;
	l->pfd = pfd;
	cap = l->cap;
	struct slot *slot = grow_array(l->slot, &cap, l->n + 1, sizeof *slot, 16);
	if (!slot)
		return -ENOMEM;
	l->slot = slot;
	l->cap = cap;
	return 0;
}

static void set(struct loop *l, size_t i, unsigned interest, void *ptr)
{
	l->slot[i].interest = interest & (LOOP_READ | LOOP_WRITE);
	l->slot[i].ptr = ptr;
	l->pfd[i] = (struct pollfd){ .fd = l->slot[i].interest ? l->slot[i].fd : -1,
				     .events = to_poll(interest) };
}

int loop_add(struct loop *l, int fd, unsigned interest, void *ptr)
{
	if (fd < 0)
		return -EBADF;
	if ((size_t)fd < l->nat && l->at[fd])
		return -EEXIST;
	lock(l);
	int e = grow(l, fd);
	if (e == 0) {
		l->slot[l->n].fd = fd;
		set(l, l->n, interest, ptr);
		l->at[fd] = (int)++l->n;
	}
	unlock_changed(l);
	return e;
}

int loop_mod(struct loop *l, int fd, unsigned interest, void *ptr)
{
	if (fd < 0 || (size_t)fd >= l->nat || !l->at[fd])
		return -ENOENT;
	size_t i = (size_t)l->at[fd] - 1;
	lock(l);
	set(l, i, interest, ptr);
	unlock_changed(l);
	return 0;
}

int loop_del(struct loop *l, int fd)
{
	if (fd < 0 || (size_t)fd >= l->nat || !l->at[fd])
		return -ENOENT;
	size_t i = (size_t)l->at[fd] - 1, last = l->n - 1;
	lock(l);
	l->at[fd] = 0;
	if (i != last) { /* the last slot fills the hole */
		l->slot[i] = l->slot[last];
		l->pfd[i] = l->pfd[last];
		l->at[l->slot[i].fd] = (int)i + 1;
	}
	l->n--;
	unlock_changed(l);
	return 0;
}

/* Ready slots into ev, from l->scan on, so that fds past a full batch go first next time. */
static int collect(struct loop *l, struct loop_event *ev, int max)
{
	int k = 0;
	for (size_t j = 0; j < l->n; j++) {
		size_t i = (l->scan + j) % l->n;
		unsigned e = l->pfd[i].fd >= 0 ? from_poll(l->pfd[i].revents) : 0;
		if (!e)
			continue;
		if (k == max) {
			l->scan = i;
			return k;
		}
		ev[k++] = (struct loop_event){ .ptr = l->slot[i].ptr, .events = e };
	}
	return k;
}

int loop_wait(struct loop *l, struct loop_event *ev, int max, int timeout_ms)
{
	if (l->threaded)
		drain(l->ready[0]); /* before polling: a "ready" written after this is for later */
	if (poll(l->pfd, (nfds_t)l->n, timeout_ms) < 0)
		return -errno;
	return collect(l, ev, max);
}

/* The watcher's copy of the set, kick[0] first.  Called locked.  Returns its length, or 0. */
static size_t copy_set(struct loop *l)
{
	if (l->n + 1 > l->copy_cap) {
		struct pollfd *c = grow_array(l->copy, &l->copy_cap, l->n + 1, sizeof *c, 16);
		if (!c)
			return 0;
		l->copy = c;
	}
	l->copy[0] = (struct pollfd){ .fd = l->kick[0], .events = POLLIN };
	for (size_t i = 0; i < l->n; i++)
		l->copy[i + 1] = (struct pollfd){ .fd = l->slot[i].interest ? l->slot[i].fd : -1,
						  .events = to_poll(l->slot[i].interest) };
	return l->n + 1;
}

static void *watch_main(void *arg)
{
	struct loop *l = arg;
	pthread_mutex_lock(&l->mu);
	while (!l->quit) {
		if (!l->armed) {
			pthread_cond_wait(&l->cv, &l->mu);
			continue;
		}
		size_t n = copy_set(l);
		bool ready = n == 0; /* no memory for a copy: wake the owner, whose own poll(2) is exact */
		l->watching = !ready;
		pthread_mutex_unlock(&l->mu);
		if (n && poll(l->copy, (nfds_t)n, -1) > 0)
			for (size_t i = 1; i < n && !ready; i++)
				ready = l->copy[i].revents != 0;
		pthread_mutex_lock(&l->mu);
		l->watching = false;
		if (l->kicked) {
			drain(l->kick[0]);
			l->kicked = false;
		}
		if (ready) {
			l->armed = false;
			(void)!write(l->ready[1], "r", 1);
		}
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static void close_pipes(struct loop *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->ready[i] >= 0)
			close(l->ready[i]);
		if (l->kick[i] >= 0)
			close(l->kick[i]);
		l->ready[i] = l->kick[i] = -1;
	}
}

static int start_watcher(struct loop *l)
{
	int e = 0;
	if (pipe2(l->ready, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(l->kick, O_CLOEXEC | O_NONBLOCK) != 0)
		e = errno;
	l->armed = true;
	if (!e)
		e = pthread_create(&l->thread, NULL, watch_main, l);
	if (e) {
		close_pipes(l);
		return -e;
	}
	l->threaded = true;
	return 0;
}

int loop_fd(struct loop *l)
{
	if (!l->threaded) {
		int e = start_watcher(l);
		if (e < 0)
			return e;
	}
	return l->ready[0];
}

void loop_idle(struct loop *l)
{
	if (!l->threaded)
		return;
	pthread_mutex_lock(&l->mu);
	l->armed = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

bool loop_has_edge(const struct loop *l)
{
	(void)l;
	return false;
}

const char *loop_backend(void)
{
	return "poll";
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	if (l->threaded) {
		pthread_mutex_lock(&l->mu);
		l->quit = true;
		pthread_cond_signal(&l->cv);
		pthread_mutex_unlock(&l->mu);
		(void)!write(l->kick[1], "q", 1);
		pthread_join(l->thread, NULL);
	}
	close_pipes(l);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l->copy);
	free(l->slot);
	free(l->pfd);
	free(l->at);
	free(l);
}
