/*
 * settle.h — telling a file still being written from a finished one.
 *
 * A profiler writes a capture in pieces, with pauses. A file may be read
 * once its size and modification time have stayed the same for the settle
 * time: since it was first seen so, or, the first time it is seen, when its
 * mtime is already that old (a finished file moved in, or found at start).
 * The tracker holds only files that are still changing; a file is dropped
 * from it once it is ready, or when a scan no longer sees it.
 *
 * Pure bookkeeping: the caller passes the clock (CLOCK_REALTIME ns, the
 * clock mtimes are on), so the rules are tested without sleeping. Not
 * thread-safe: one scanning thread owns a tracker.
 */
#ifndef XPV_SETTLE_H
#define XPV_SETTLE_H

#include "../common/xpv_common.h"

typedef struct xpv_settle xpv_settle;

xpv_settle *xpv_settle_new(int64_t settle_ns);
void xpv_settle_free(xpv_settle *s);

/* One sighting of a new or changed file at now_ns. Returns 1 when it may be
 * read (stable for the settle time), 0 while it is still changing. */
int xpv_settle_observe(xpv_settle *s, const char *key, int64_t size, int64_t mtime_ns,
                       int64_t now_ns);

/* Ends a scan: forgets every file not observed since the last sweep
 * (deleted, or unchanged again), so the tracker never outgrows the files
 * actually being written. */
void xpv_settle_sweep(xpv_settle *s);

/* Nanoseconds from now_ns until the first still-changing file may be
 * ready (0 when one already is), or -1 when none is waiting. */
int64_t xpv_settle_next_due(const xpv_settle *s, int64_t now_ns);

/* Files being tracked (still changing). */
size_t xpv_settle_count(const xpv_settle *s);

#endif
