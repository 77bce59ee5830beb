/* loop_epoll.c — the proxy's event loop on Linux epoll(7): edge-triggered where asked, the epoll fd as loop_fd(). */
#include "proxy/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Ready fds taken from the kernel per loop_wait(); more wait for the next call. */
#define BATCH 64

struct loop {
	int ep;
};

/*
 * Nothing about the fds is kept here: epoll(7) holds the interest, and an
 * fd watched for nothing is simply not in the epoll set (EPOLL_CTL_MOD with
 * no events would still report EPOLLERR and EPOLLHUP, level-triggered: a
 * client reset while a human decides would spin the loop).
 */
static uint32_t to_epoll(unsigned interest)
{
	uint32_t e = 0;
	if (interest & LOOP_READ)
		e |= EPOLLIN | EPOLLRDHUP;
	if (interest & LOOP_WRITE)
		e |= EPOLLOUT;
	if (interest & LOOP_EDGE)
		e |= EPOLLET;
	return e;
}

static unsigned from_epoll(uint32_t e)
{
	unsigned ev = 0;
	if (e & (EPOLLIN | EPOLLRDHUP))
		ev |= LOOP_READ;
	if (e & EPOLLOUT)
		ev |= LOOP_WRITE;
	if (e & (EPOLLERR | EPOLLHUP))
		ev |= LOOP_ERROR;
	return ev;
}

struct loop *loop_new(void)
{
	struct loop *l = malloc(sizeof *l);
	if (!l)
		return NULL;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0) {
		free(l);
		return NULL;
	}
	return l;
}

int loop_add(struct loop *l, int fd, unsigned interest, void *ptr)
{
	struct epoll_event ev = { .events = to_epoll(interest), .data.ptr = ptr };
	if (!interest)
		return 0; /* added when it first has an interest */
	return epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

int loop_mod(struct loop *l, int fd, unsigned interest, void *ptr)
{
	struct epoll_event ev = { .events = to_epoll(interest), .data.ptr = ptr };
	if (!interest)
		return loop_del(l, fd);
	if (epoll_ctl(l->ep, EPOLL_CTL_MOD, fd, &ev) == 0)
		return 0;
	/* watched for nothing until now: not in the set */
	if (errno == ENOENT && epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) == 0)
		return 0;
	return -errno;
}

int loop_del(struct loop *l, int fd)
{
	if (epoll_ctl(l->ep, EPOLL_CTL_DEL, fd, NULL) == 0 || errno == ENOENT)
		return 0; /* ENOENT: added with no interest, never in the set */
	return -errno;
}

int loop_wait(struct loop *l, struct loop_event *ev, int max, int timeout_ms)
{
	struct epoll_event evs[BATCH];
	int n = epoll_wait(l->ep, evs, max < BATCH ? max : BATCH, timeout_ms);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		ev[i] = (struct loop_event){ .ptr = evs[i].data.ptr, .events = from_epoll(evs[i].events) };
	return n;
}

int loop_fd(struct loop *l)
{
	return l->ep; /* an epoll fd polls readable while its ready list is not empty */
}

void loop_idle(struct loop *l)
{
	(void)l;
}

bool loop_has_edge(const struct loop *l)
{
	(void)l;
	return true;
}

const char *loop_backend(void)
{
	return "epoll";
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	close(l->ep);
	free(l);
}
