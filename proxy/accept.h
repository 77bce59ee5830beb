/*
 * accept.h — accept(2) that sheds a connection when the process is out of
 * file descriptors, instead of leaving it queued.
 *
 * When accept4(2) fails with EMFILE (this process's RLIMIT_NOFILE) or
 * ENFILE (the system's table), the connection stays in the listener's
 * queue, the listener stays readable, and an event loop that polls it spins
 * at full CPU while every other client waits.  The usual remedy (libev's
 * and libuv's, see the EMFILE notes of libev's ev_io documentation) is a
 * descriptor held in reserve: close it, accept the waiting connection, close
 * that at once — the peer sees its connection end, which a shim treats as a
 * refusal — and open the reserve again.  Single-threaded use: the reserve is
 * one per process.
 */
#ifndef AIRLOCK_ACCEPT_H
#define AIRLOCK_ACCEPT_H

/*
 * Opens the reserve descriptor (/dev/null, close-on-exec) if it is not
 * open.  Call once before the loop, while descriptors are still free.
 * 0 or -errno.
 */
int accept_reserve(void);

/*
 * accept4(lfd, NULL, NULL, flags), retried on EINTR.  Returns the new fd,
 * or -1 with errno:
 *   EAGAIN        none waits;
 *   ECONNABORTED  one waited, and for want of descriptors was accepted and
 *                 closed at once (call again: more may wait);
 *   EMFILE/ENFILE out of descriptors and no reserve to shed with: the
 *                 connection stays queued, so stop polling lfd for a while;
 *   others        as accept4(2).
 */
int accept_shed(int lfd, int flags);

#endif
