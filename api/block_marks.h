/*
 * block_marks.h — a cache of resume marks inside event blocks, so a time
 * window decodes only the part of a long block that can overlap it.
 *
 * A block of one track and duration class (dur < 2^lod) may span much more
 * time than a window. When the block's starts are sorted, an event that
 * overlaps [a, b] starts after a - 2^lod and before b: decoding from the
 * last mark at or before a - 2^lod and stopping past b is enough. Marks are
 * taken every XPV_MARK_EVERY events.
 *
 * The cache belongs to whoever creates it (the server keeps one); it is
 * safe to use from several threads. An entry is keyed by the block id plus
 * facts from its header (count, size, time span), so a block rewritten by a
 * re-index under a reused id is never matched. When the cache outgrows its
 * budget it is emptied and refilled on demand.
 */
#ifndef XPV_BLOCK_MARKS_H
#define XPV_BLOCK_MARKS_H

#include "../store/event_store.h"

#define XPV_MARK_EVERY 64

typedef struct xpv_block_marks xpv_block_marks;

typedef struct {
    int64_t block_id, n, bytes, t_min, t_max;
} xpv_block_key;

xpv_block_marks *xpv_block_marks_new(size_t max_bytes);
void xpv_block_marks_free(xpv_block_marks *m);

/* What xpv_block_marks_find knows of a block (it cannot fail). */
enum {
    XPV_MARKS_MISSING = 0,  /* not cached */
    XPV_MARKS_FOUND = 1,    /* *mark set: decode from it, stop past the window's end */
    XPV_MARKS_UNSORTED = 2, /* cached, but its starts are not sorted: decode it whole */
};
/* For a window starting at t (lookback already subtracted). */
int xpv_block_marks_find(xpv_block_marks *m, const xpv_block_key *k, int64_t t,
                         xpv_store_mark *mark);

/* Walks the block once and caches its marks. Returns 0, or -1 with err
 * (the block is damaged). */
int xpv_block_marks_add(xpv_block_marks *m, const xpv_block_key *k, const void *data, size_t len,
                        xpv_err *err);

/* Caches every block of a profile not cached yet; stops early when *stop
 * becomes non-zero. Returns the number of blocks added, or -1 with err. */
int64_t xpv_block_marks_warm(xpv_block_marks *m, sqlite3 *db, int64_t profile_id,
                             volatile int *stop, xpv_err *err);

/* The same for every profile that has events, until *stop. */
void xpv_block_marks_warm_all(xpv_block_marks *m, sqlite3 *db, volatile int *stop);

/* Bytes held, for health and benchmarks. */
size_t xpv_block_marks_bytes(xpv_block_marks *m);

#endif
