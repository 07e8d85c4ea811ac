/*
 * event_store.h — events packed into blocks, and the queries over them.
 *
 * Events of one track are grouped by duration class ("lod": an event of
 * dur_ns lasts less than 2^lod ns; instants are class 0) and packed, a few
 * thousand at a time, into one `blocks` row that also records the block's
 * earliest start, latest end, count and summed duration. So:
 *  - a time-window query reads only the blocks that overlap the window;
 *  - a class whose events are shorter than a pixel can be drawn from block
 *    headers alone, without decoding a single event;
 *  - storing costs one SQLite row per block, not per event.
 * Within a block events keep the order the reader delivered them in.
 */
#ifndef XPV_EVENT_STORE_H
#define XPV_EVENT_STORE_H

#include "xpv_event.h"
#include "../common/xpv_common.h"
#include <sqlite3.h>

#define XPV_LOD_COUNT 64

static inline int xpv_store_lod(int64_t dur_ns)
{
    if (dur_ns <= 0) return 0;
    return 64 - __builtin_clzll((unsigned long long)dur_ns);
}

typedef struct xpv_store_writer xpv_store_writer;

xpv_store_writer *xpv_store_writer_open(sqlite3 *db, int64_t profile_id, xpv_err *err);
/* Appends one event (all pointers copied). Returns 0 or -1 on a SQLite error. */
int xpv_store_add(xpv_store_writer *w, const xpv_event *ev, xpv_err *err);
/* Writes out every partly filled block and frees the writer. */
int xpv_store_writer_close(xpv_store_writer *w, xpv_err *err);
void xpv_store_writer_abandon(xpv_store_writer *w);

/* Called for each decoded event. Pointers (args, texts) are valid only during
 * the call. (block_id, index) names the event for a later xpv_store_event_at.
 * Return non-zero to stop the scan (that value is returned by the scan). */
typedef int (*xpv_store_visit)(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index);

/* Decodes a block blob; track is filled into each event. */
int xpv_store_decode(const void *data, size_t len, uint32_t track, int64_t block_id,
                     xpv_store_visit fn, void *ctx, xpv_err *err);

/* The block's event payload as it is before compression (the bytes a
 * resume mark's offset counts), into out; for benchmarks and tests. */
int xpv_store_payload(const void *data, size_t len, xpv_buf *out, xpv_err *err);

/* A place to resume decoding a block: event `index` starts at byte
 * `offset`; ts are delta-coded, so the previous event's ts comes along.
 * Readers of long blocks keep a few marks to decode only what a time
 * window needs (see xpv_store_marks). */
typedef struct {
    uint32_t offset;
    uint32_t index;
    int64_t prev_ts; /* ts of event index-1 (0 for the first event) */
    int64_t ts;      /* ts of event index */
} xpv_store_mark;

/* Like xpv_store_decode, starting at mark `from` (NULL: the first event). */
int xpv_store_decode_from(const void *data, size_t len, uint32_t track, int64_t block_id,
                          const xpv_store_mark *from, xpv_store_visit fn, void *ctx, xpv_err *err);

/* Walks a block, writing a mark for every `every`-th event (the first
 * included) into out, at most cap. *sorted is set to 1 when starts never
 * decrease in the block. Returns the number of marks, or -1 with err. */
int xpv_store_marks(const void *data, size_t len, uint32_t every, xpv_store_mark *out, size_t cap,
                    int *sorted, xpv_err *err);

typedef struct {
    int64_t profile_id;
    int64_t track;        /* -1: every track */
    int64_t t0, t1;       /* events overlapping [t0, t1]; INT64_MIN/INT64_MAX for all */
    int lod_min, lod_max; /* inclusive duration-class range; 0..XPV_LOD_COUNT-1 for all */
    uint32_t kinds;       /* only events whose 1u << kind is set; 0 for all. Blocks
                             holding none of them are not even read. */
    int skip_args;        /* visitors get nargs == 0: faster when args are not needed */
} xpv_store_query;

#define XPV_KIND_BIT(k) (1u << (k))
/* Device work: kernels, copies and memsets. */
#define XPV_KIND_DEVICE_WORK_BITS                                                                  \
    (XPV_KIND_BIT(XPV_KIND_KERNEL) | XPV_KIND_BIT(XPV_KIND_MEMCPY_H2D) |                           \
     XPV_KIND_BIT(XPV_KIND_MEMCPY_D2H) | XPV_KIND_BIT(XPV_KIND_MEMCPY_D2D) |                       \
     XPV_KIND_BIT(XPV_KIND_MEMCPY_OTHER) | XPV_KIND_BIT(XPV_KIND_MEMSET))
/* Beyond the kind bits, a block's `kinds` says whether it holds counter
 * samples (ph 'C', or instants flagged `counter`) or flow records (ph s/t/f, or events whose args
 * carry a flow), so the counter and flow queries read only such blocks. A query naming one of them
 * filters blocks by it and events by the kind bits alone. */
#define XPV_BLOCK_COUNTERS (1u << 31)
#define XPV_BLOCK_FLOWS (1u << 30)
#define XPV_KIND_BITS ((1u << XPV_KIND_COUNT) - 1)

static inline void xpv_store_query_all(xpv_store_query *q, int64_t profile_id)
{
    q->profile_id = profile_id;
    q->track = -1;
    q->t0 = INT64_MIN;
    q->t1 = INT64_MAX;
    q->lod_min = 0;
    q->lod_max = XPV_LOD_COUNT - 1;
    q->kinds = 0;
    q->skip_args = 0;
}

/* Visits every event matching q (blocks in (track, lod, t_min) order).
 * Returns 0, the visitor's non-zero value, or -1 with err. */
int xpv_store_scan(sqlite3 *db, const xpv_store_query *q, xpv_store_visit fn, void *ctx,
                   xpv_err *err);

/* Block headers only, for summaries: called once per block matching q. */
typedef struct {
    int64_t block_id;
    uint32_t track;
    int lod;
    int64_t t_min, t_max, n, busy_ns;
} xpv_block_info;
typedef int (*xpv_block_visit)(void *ctx, const xpv_block_info *b);
int xpv_store_blocks(sqlite3 *db, const xpv_store_query *q, xpv_block_visit fn, void *ctx,
                     xpv_err *err);

/* Decodes the single event (block_id, index); fn is called once. */
int xpv_store_event_at(sqlite3 *db, int64_t profile_id, int64_t block_id, uint32_t index,
                       xpv_store_visit fn, void *ctx, xpv_err *err);

/* Every message about a damaged block says "event block <id> is damaged"
 * (or "event block is damaged"), and one about a device's packed kernel
 * rows XPV_STORE_KERNEL_DEVICE_DAMAGED: 1 when text holds one, so a layer that sees
 * only the message (an HTTP answer) can tell damage from other errors. */
int xpv_store_damage_in(const char *text);

/* Decodes every event of every block of a profile, args included: 0 when
 * all decode (or *stop became non-zero), 1 with err naming the first
 * damaged block, -1 with err on an SQLite error. */
int xpv_store_verify(sqlite3 *db, int64_t profile_id, volatile int *stop, xpv_err *err);

#endif
