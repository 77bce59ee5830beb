/* flood.c — a bound on how often one peer's bad input is logged (see flood.h). */
#include <stdlib.h>

#include "launcher/approvals/flood.h"

struct peer {
	pid_t pid;          /* 0: a free slot */
	long long start;    /* the window's start */
	long long seen;     /* last event, for eviction */
	unsigned logged;    /* events logged in this window */
	unsigned long held; /* events dropped unlogged, not yet summarised */
};

struct flood {
	flood_summary_fn fn;
	void *arg;
	struct peer peers[FLOOD_PEERS];
	long long total_start;
	unsigned total_logged;
	unsigned long lost; /* held counts of evicted peers, summarised together (pid 0) */
	long long lost_at;  /* when they were last summarised */
};

struct flood *flood_new(flood_summary_fn fn, void *arg)
{
	struct flood *f = calloc(1, sizeof *f);
	if (f) {
		f->fn = fn;
		f->arg = arg;
		f->total_start = f->lost_at = -FLOOD_WINDOW_MS;
	}
	return f;
}

static void summarise(struct flood *f, struct peer *p)
{
	if (p->held && f->fn)
		f->fn(f->arg, p->pid, p->held);
	p->held = 0;
}

/* The peer's slot: its own, a free one, or the least recently seen one (summarised first). */
static struct peer *slot(struct flood *f, pid_t pid)
{
	struct peer *free_slot = NULL, *oldest = &f->peers[0];
	for (size_t i = 0; i < FLOOD_PEERS; i++) {
		struct peer *p = &f->peers[i];
		if (p->pid == pid)
			return p;
		if (!p->pid && !free_slot)
			free_slot = p;
		if (p->seen < oldest->seen)
			oldest = p;
	}
	struct peer *p = free_slot ? free_slot : oldest;
	f->lost += p->held; /* many short-lived peers make one summary line, not one each */
	*p = (struct peer){ .pid = pid, .start = -FLOOD_WINDOW_MS };
	return p;
}

bool flood_admit(struct flood *f, pid_t peer, long long now_ms)
{
	struct peer *p = slot(f, peer);
	p->seen = now_ms;
	if (now_ms - p->start >= FLOOD_WINDOW_MS) {
		p->start = now_ms;
		p->logged = 0;
	}
	if (now_ms - f->total_start >= FLOOD_WINDOW_MS) {
		f->total_start = now_ms;
		f->total_logged = 0;
	}
	if (p->logged >= FLOOD_BURST || f->total_logged >= FLOOD_TOTAL_BURST) {
		p->held++;
		return false;
	}
	summarise(f, p); /* what was held from this peer comes before its next logged event */
	p->logged++;
	f->total_logged++;
	return true;
}

void flood_tick(struct flood *f, long long now_ms)
{
	if (f && f->lost && now_ms - f->lost_at >= FLOOD_WINDOW_MS) {
		if (f->fn)
			f->fn(f->arg, 0, f->lost);
		f->lost = 0;
		f->lost_at = now_ms;
	}
	for (size_t i = 0; f && i < FLOOD_PEERS; i++) {
		struct peer *p = &f->peers[i];
		if (p->pid && p->held && now_ms - p->start >= FLOOD_WINDOW_MS) {
			summarise(f, p);
			/* a new window: the summary counts as its first line */
			p->start = now_ms;
			p->logged = 1;
		}
	}
}

void flood_flush(struct flood *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < FLOOD_PEERS; i++)
		summarise(f, &f->peers[i]);
	if (f->lost && f->fn)
		f->fn(f->arg, 0, f->lost);
	f->lost = 0;
}

void flood_free(struct flood *f)
{
	flood_flush(f);
	free(f);
}
