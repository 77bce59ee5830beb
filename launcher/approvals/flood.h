/*
 * flood.h — a bound on how often one peer's bad input is logged.
 *
 * A process inside the sandbox can write garbage to the approval channel, or
 * a client to the control socket, as fast as the kernel carries it; logging
 * every dropped message would let it fill the disk and bury real events
 * under its own.  Each peer (a pid) gets FLOOD_BURST logged events per
 * FLOOD_WINDOW_MS, and all peers together FLOOD_TOTAL_BURST: the rest are
 * counted and summarised ("N more ... dropped") once the peer's window has
 * passed, when it shows up again, or at the end.  The same idea as the
 * kernel's printk_ratelimit() (include/linux/ratelimit.h): a burst, then a
 * count of what was suppressed.
 *
 * Time is passed in (milliseconds of CLOCK_MONOTONIC), so tests need no
 * clock.  No allocation after flood_new(); peers beyond FLOOD_PEERS evict the
 * least recently seen one, whose count is summarised first.
 */
#ifndef AIRLOCK_FLOOD_H
#define AIRLOCK_FLOOD_H

#include <stdbool.h>
#include <sys/types.h>

#define FLOOD_BURST 10        /* events logged per peer per window */
#define FLOOD_TOTAL_BURST 100 /* events logged per window, all peers together */
#define FLOOD_WINDOW_MS 1000
#define FLOOD_PEERS 64        /* peers tracked at once */

struct flood;

/*
 * Told that n events of peer were dropped unlogged (n > 0): the caller
 * writes one summary line.  pid 0 stands for peers no longer tracked.
 */
typedef void (*flood_summary_fn)(void *arg, pid_t peer, unsigned long n);

/* A new limiter; summaries go to fn(arg, ...).  NULL when out of memory. */
struct flood *flood_new(flood_summary_fn fn, void *arg);

/*
 * One event of peer at now_ms: true when it is to be logged, false when it
 * is only counted.  A peer's earlier suppressed events are summarised (fn)
 * before this returns true for it.
 */
bool flood_admit(struct flood *f, pid_t peer, long long now_ms);

/* Summarises every peer whose window ended by now_ms (call it now and then, e.g. once per loop). */
void flood_tick(struct flood *f, long long now_ms);

/* Summarises every count left now, whatever the windows (the session is ending).  Accepts NULL. */
void flood_flush(struct flood *f);

/* flood_flush(), then frees f.  Accepts NULL. */
void flood_free(struct flood *f);

#endif
