/*
 * events.c — the events of a time window, reduced to what `resolution`
 * pixels can show, for the timeline.
 *
 * With pixel = window / resolution, an event class (dur < 2^lod ns) whose
 * durations can reach a pixel (2^lod > pixel) is returned event by event.
 * Shorter classes become summary spans per track: a block whose events are
 * dense (more than DENSE_PER_PIXEL per pixel) or that spans under two pixels
 * is spread over the pixels it covers from its header alone, never decoded,
 * unless it holds at most FEW_EVENTS (a lone instant or zero-length slice
 * is shown as itself, clickable); a sparse block is decoded and its events
 * are counted per pixel. Adjacent pixels with the same dominant name merge
 * into one span; a pixel holding a single decoded event returns that event
 * itself. So the answer is bounded by tracks x resolution whatever the
 * profile's size.
 *
 * Nesting depth is computed per track over the returned items (sorted by
 * start, longest first); an event's ancestors are never shorter than it, so
 * every returned event's ancestors are returned too and depths are stable
 * across zoom levels. Spans are leaves.
 *
 * The derived device rows of a GPU JAX profile (device_rows.h) are tracks
 * too, above the stored ids: their spans go through the same classes and
 * pixels, carry the ref of their first device event, and are built only
 * when the query names one of them or names no track.
 */
#include "api.h"
#include "api_util.h"
#include "../store/tracks.h"
#include "block_marks.h"
#include "device_rows.h"
#include "../common/xpv_hindex.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DENSE_PER_PIXEL 1
#define FEW_EVENTS 16
#define MAX_EVENTS 400000
#define NO_NAME INT64_MIN

typedef struct {
    int64_t start, end;
    int64_t block; /* -1 for a summary span */
    uint32_t index;
    uint64_t name; /* a string id, or DERIVED_NAME | a derived row's name */
    int name_known;
    int64_t count;
    int depth;
    int instant; /* an event without a duration: its dur is written as null */
} item;

typedef struct {
    int64_t count;
    int64_t t0, t1;
    uint64_t name;
    int64_t name_dur; /* duration of the event that gave the name, NO_NAME none */
    int64_t block;    /* the single decoded event here, or -1 */
    uint32_t index;
} bucket;

typedef struct {
    int wanted;
    item *items;
    size_t nitems, cap;
    bucket *buckets; /* resolution entries, allocated on first use */
} track_acc;

typedef struct {
    int64_t a, b;
    double pixel;
    int resolution;
    track_acc *tracks;
    size_t ntracks;
    int64_t nevents;
    int truncated;
    track_acc *current;
    int current_long;
    int stop_past_end; /* the block is sorted: nothing after b can overlap */
    xpv_block_marks *marks;
    const xpv_devrows *dev;              /* the derived device rows, when asked for (lent) */
    struct xpv_devrows_cache *dev_cache; /* whence dev was lent, NULL: none */
} window;

#define STOP_DECODING 2
#define DERIVED_NAME (1ULL << 32)

static void push_item(track_acc *t, const item *it)
{
    if (t->nitems == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->items = xpv_xrealloc(t->items, t->cap * sizeof *t->items);
    }
    t->items[t->nitems++] = *it;
}

static bucket *buckets_of(window *w, track_acc *t)
{
    if (!t->buckets) {
        t->buckets = xpv_xcalloc((size_t)w->resolution, sizeof *t->buckets);
        for (int i = 0; i < w->resolution; i++)
            t->buckets[i].name_dur = NO_NAME;
    }
    return t->buckets;
}

static int pixel_of(const window *w, int64_t t)
{
    if (t <= w->a) return 0;
    double p = (double)(t - w->a) / w->pixel;
    return p >= w->resolution ? w->resolution - 1 : (int)p;
}

static void bucket_add_event(window *w, track_acc *t, int64_t ts, int64_t dur, uint64_t name,
                             int64_t block, uint32_t index)
{
    int64_t end = ts + (dur > 0 ? dur : 0);
    bucket *k = &buckets_of(w, t)[pixel_of(w, ts)];
    if (k->count == 0) {
        k->t0 = ts, k->t1 = end, k->block = block, k->index = index;
    } else {
        k->block = -1;
        if (ts < k->t0) k->t0 = ts;
        if (end > k->t1) k->t1 = end;
    }
    k->count++;
    if (dur > k->name_dur) k->name = name, k->name_dur = dur;
}

static int visit_event(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    window *w = ctx;
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (ev->ts_ns > w->b) return w->stop_past_end ? STOP_DECODING : 0;
    if (end < w->a) return 0;
    if (!w->current_long) {
        bucket_add_event(w, w->current, ev->ts_ns, ev->dur_ns, ev->name, block, index);
        return 0;
    }
    if (w->nevents >= MAX_EVENTS) {
        w->truncated = 1;
        return 0;
    }
    item it = {ev->ts_ns, end, block, index, ev->name, 1, 1, 0, ev->dur_ns < 0};
    push_item(w->current, &it);
    w->nevents++;
    return 0;
}

/* A dense or narrow block's events, spread over its pixels by time. */
static void spread_header(window *w, track_acc *t, int64_t t_min, int64_t t_max, int64_t n)
{
    int64_t lo = t_min > w->a ? t_min : w->a, hi = t_max < w->b ? t_max : w->b;
    if (hi < lo) return;
    bucket *bk = buckets_of(w, t);
    int p0 = pixel_of(w, lo), p1 = pixel_of(w, hi);
    double span = (double)(t_max - t_min);
    int64_t given = 0;
    for (int p = p0; p <= p1; p++) {
        double px_lo = (double)w->a + p * w->pixel, px_hi = px_lo + w->pixel;
        double upto = p == p1 ? (double)hi : px_hi;
        double share = span > 0 ? ((upto - (double)t_min) / span) : 1.0;
        int64_t cum = p == p1 && hi == t_max && lo == t_min ? n : llround(n * fmin(1.0, share));
        int64_t add = cum - given;
        if (add <= 0) continue;
        given = cum;
        bucket *k = &bk[p];
        int64_t k0 = (int64_t)fmax((double)lo, px_lo), k1 = (int64_t)fmin((double)hi, px_hi);
        if (k->count == 0) k->t0 = k0, k->t1 = k1;
        if (k0 < k->t0) k->t0 = k0;
        if (k1 > k->t1) k->t1 = k1;
        k->count += add;
        k->block = -1;
    }
}

/* The rows of a window that asks for no derived row. */
static const xpv_devrows NO_ROWS;

/* Whether q asks for a track beyond the stored ones (a derived row). */
static int wants_derived(const xpv_events_query *q, int64_t max_id)
{
    for (size_t i = 0; q->tracks && i < q->ntracks; i++)
        if (q->tracks[i] > max_id) return 1;
    return q->tracks == NULL;
}

static int load_tracks(sqlite3 *db, int64_t id, const xpv_events_query *q, window *w, xpv_buf *out)
{
    int64_t max_id = -1;
    xpv_err err = {{0}};
    if (xpv_store_tracks_max_id(db, id, &max_id, &err) < 0)
        return xpv_api_error(out, 500, "%s", err.msg);
    if (max_id >= (1 << 24)) return xpv_api_error(out, 500, "index: implausible track id");
    if (wants_derived(q, max_id)) {
        w->dev_cache = q->devrows;
        if (!(w->dev = xpv_devrows_acquire(db, id, q->devrows, &err)))
            return xpv_api_error(out, 500, "%s", err.msg);
    } else {
        w->dev = &NO_ROWS;
    }
    w->ntracks = (size_t)(max_id + 1);
    for (size_t i = 0; i < w->dev->nrows; i++)
        if ((size_t)w->dev->rows[i].track >= w->ntracks)
            w->ntracks = (size_t)w->dev->rows[i].track + 1;
    w->tracks = xpv_xcalloc(w->ntracks ? w->ntracks : 1, sizeof *w->tracks);
    for (size_t i = 0; i < w->ntracks; i++)
        w->tracks[i].wanted = q->tracks == NULL;
    for (size_t i = 0; q->tracks && i < q->ntracks; i++) {
        int64_t t = q->tracks[i];
        if (t < 0 || (size_t)t >= w->ntracks || (t > max_id && !xpv_devrows_row(w->dev, t)))
            return xpv_api_error(out, 400, "no track %lld in this profile", (long long)t);
        w->tracks[t].wanted = 1;
    }
    return 200;
}

static const char *const WINDOW_SQL =
    "SELECT id, track, lod, t_min, t_max, n, CASE WHEN lod >= ?5 OR n <= ?8 OR"
    " ((t_max - t_min) >= ?6 AND n <= (t_max - t_min) * ?7) THEN data END FROM blocks"
    " WHERE profile_id=?1 AND"
    " (?2 < 0 OR track=?2) AND t_min <= ?4 AND t_max >= ?3";

/* Where to start decoding a block for this window: a cached mark when the
 * block is long and sorted (then decoding stops past the window), else its
 * first event. */
static const xpv_store_mark *resume_mark(window *w, sqlite3_stmt *st, xpv_store_mark *mark)
{
    w->stop_past_end = 0;
    int64_t n = sqlite3_column_int64(st, 5);
    if (!w->marks || n <= XPV_MARK_EVERY) return NULL;
    int lod = sqlite3_column_int(st, 2);
    xpv_block_key k = {sqlite3_column_int64(st, 0), n, sqlite3_column_bytes(st, 6),
                       sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4)};
    /* Events of class lod last under 2^lod ns: one that overlaps the window
     * starts after a - 2^lod. */
    int64_t lookback = lod >= 62 ? INT64_MAX : (lod > 0 ? (int64_t)1 << lod : 0);
    int64_t from = w->a > INT64_MIN + lookback ? w->a - lookback : INT64_MIN;
    int found = xpv_block_marks_find(w->marks, &k, from, mark);
    /* a damaged block is decoded whole, and the decoder reports it */
    if (found == XPV_MARKS_MISSING &&
        xpv_block_marks_add(w->marks, &k, sqlite3_column_blob(st, 6), (size_t)k.bytes, NULL) == 0)
        found = xpv_block_marks_find(w->marks, &k, from, mark);
    if (found != XPV_MARKS_FOUND) return NULL;
    w->stop_past_end = 1;
    return mark;
}

static int scan_track(sqlite3 *db, sqlite3_stmt *st, int64_t track, window *w, int long_lod,
                      xpv_buf *out)
{
    sqlite3_bind_int64(st, 2, track);
    int rc;
    xpv_err err = {{0}};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t tr = sqlite3_column_int64(st, 1);
        if (tr < 0 || (size_t)tr >= w->ntracks || !w->tracks[tr].wanted) continue;
        w->current = &w->tracks[tr];
        w->current_long = sqlite3_column_int(st, 2) >= long_lod;
        if (sqlite3_column_type(st, 6) == SQLITE_NULL) {
            spread_header(w, w->current, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
                          sqlite3_column_int64(st, 5));
            continue;
        }
        xpv_store_mark mark;
        const void *blob = sqlite3_column_blob(st, 6);
        size_t len = (size_t)sqlite3_column_bytes(st, 6);
        const xpv_store_mark *from = resume_mark(w, st, &mark);
        int drc = xpv_store_decode_from(blob, len, (uint32_t)tr, sqlite3_column_int64(st, 0), from,
                                        visit_event, w, &err);
        if (drc != 0 && drc != STOP_DECODING) {
            sqlite3_reset(st);
            return xpv_api_error(out, 500, "index: %s", err.msg);
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    return 200;
}

/* The derived rows' spans, as the stored events of a class: one by one
 * when they can reach a pixel, else into the pixels' buckets. */
static void collect_derived(window *w, int long_lod)
{
    for (size_t r = 0; r < w->dev->nrows; r++) {
        const xpv_devrow *row = &w->dev->rows[r];
        track_acc *t = &w->tracks[row->track];
        for (size_t i = 0; t->wanted && i < row->n; i++) {
            const xpv_devrow_span *s = &row->spans[i];
            if (s->start > w->b || s->end < w->a) continue;
            uint64_t name = DERIVED_NAME | s->name;
            if (xpv_store_lod(s->end - s->start) < long_lod) {
                bucket_add_event(w, t, s->start, s->end - s->start, name, s->block, s->index);
            } else if (w->nevents >= MAX_EVENTS) {
                w->truncated = 1;
            } else {
                item it = {s->start, s->end, s->block, s->index, name, 1, 1, 0, 0};
                push_item(t, &it);
                w->nevents++;
            }
        }
    }
}

static int collect(sqlite3 *db, int64_t id, const xpv_events_query *q, window *w, xpv_buf *out)
{
    int long_lod = 0;
    while (long_lod < XPV_LOD_COUNT - 1 && ldexp(1.0, long_lod) <= w->pixel)
        long_lod++;
    collect_derived(w, long_lod);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, WINDOW_SQL, -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 3, w->a);
    sqlite3_bind_int64(st, 4, w->b);
    sqlite3_bind_int(st, 5, long_lod);
    sqlite3_bind_double(st, 6, 2.0 * w->pixel);
    sqlite3_bind_double(st, 7, DENSE_PER_PIXEL / w->pixel);
    sqlite3_bind_int(st, 8, FEW_EVENTS);
    int status = 200;
    if (!q->tracks) status = scan_track(db, st, -1, w, long_lod, out);
    for (size_t i = 0; q->tracks && i < q->ntracks && status == 200; i++)
        status = scan_track(db, st, q->tracks[i], w, long_lod, out);
    sqlite3_finalize(st);
    return status;
}

/* Pixels -> single events and summary spans (same-name neighbours merged). */
static void buckets_to_items(window *w, track_acc *t)
{
    if (!t->buckets) return;
    item span = {0};
    int open = 0;
    for (int p = 0; p < w->resolution; p++) {
        bucket *k = &t->buckets[p];
        if (!k->count || (k->count == 1 && k->block >= 0)) {
            if (open) push_item(t, &span), open = 0;
            if (k->count) {
                /* one event: name_dur is its own duration, -1 without one */
                item it = {k->t0, k->t1, k->block, k->index, k->name, 1, 1, 0, k->name_dur < 0};
                push_item(t, &it);
            }
            continue;
        }
        int known = k->name_dur != NO_NAME;
        if (open && span.name_known == known && (!known || span.name == k->name)) {
            span.count += k->count;
            if (k->t0 < span.start) span.start = k->t0;
            if (k->t1 > span.end) span.end = k->t1;
            continue;
        }
        if (open) push_item(t, &span);
        span = (item){k->t0, k->t1, -1, 0, known ? k->name : 0, known, k->count, 0, 0};
        open = 1;
    }
    if (open) push_item(t, &span);
    free(t->buckets);
    t->buckets = NULL;
}

static int by_start_longest_first(const void *pa, const void *pb)
{
    const item *x = pa, *y = pb;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    if ((x->block < 0) != (y->block < 0)) return x->block < 0 ? 1 : -1;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int assign_depths(track_acc *t)
{
    xpv_sort(t->items, t->nitems, sizeof *t->items, by_start_longest_first);
    int64_t *stack = xpv_xmalloc((t->nitems + 1) * sizeof *stack);
    size_t depth = 0;
    int max_depth = 0;
    for (size_t i = 0; i < t->nitems; i++) {
        item *it = &t->items[i];
        while (depth && stack[depth - 1] <= it->start)
            depth--;
        it->depth = (int)depth;
        if (it->depth > max_depth) max_depth = it->depth;
        if (it->block >= 0 && it->end > it->start) stack[depth++] = it->end;
    }
    free(stack);
    return max_depth;
}

/* ---- names: string id -> index in the answer's names table ---- */

typedef struct {
    uint64_t *ids;
    size_t n, cap;
    xpv_hindex local; /* name (item.name) -> local index */
} name_table;

static uint32_t name_local(name_table *nt, uint64_t id)
{
    uint64_t *at = xpv_hindex_put(&nt->local, id, nt->n);
    if (*at < nt->n) return (uint32_t)*at;
    nt->ids = xpv_grow_to_index(nt->ids, &nt->cap, nt->n, sizeof *nt->ids, 0);
    nt->ids[nt->n] = id;
    return (uint32_t)nt->n++;
}

static void put_track(xpv_buf *b, window *w, size_t id, name_table *nt)
{
    track_acc *t = &w->tracks[id];
    int max_depth = assign_depths(t);
    xpv_buf_printf(b, "{\"id\":%zu,\"max_depth\":%d,\"events\":[", id, max_depth);
    int n = 0;
    for (size_t i = 0; i < t->nitems; i++) {
        const item *it = &t->items[i];
        if (it->block < 0) continue;
        xpv_buf_puts(b, n++ ? ",[" : "[");
        xpv_api_put_us(b, it->start);
        xpv_buf_putc(b, ',');
        if (it->instant)
            xpv_buf_puts(b, "null");
        else
            xpv_api_put_us(b, it->end - it->start);
        xpv_buf_putc(b, ',');
        xpv_api_put_int(b, name_local(nt, it->name));
        xpv_buf_putc(b, ',');
        xpv_api_put_int(b, it->depth);
        xpv_buf_puts(b, ",\"");
        xpv_api_put_int(b, it->block);
        xpv_buf_putc(b, ':');
        xpv_api_put_int(b, it->index);
        xpv_buf_puts(b, "\"]");
    }
    xpv_buf_puts(b, "],\"spans\":[");
    n = 0;
    for (size_t i = 0; i < t->nitems; i++) {
        const item *it = &t->items[i];
        if (it->block >= 0) continue;
        xpv_buf_puts(b, n++ ? ",[" : "[");
        xpv_api_put_us(b, it->start);
        xpv_buf_putc(b, ',');
        xpv_api_put_us(b, it->end);
        xpv_buf_putc(b, ',');
        xpv_api_put_int(b, it->count);
        xpv_buf_putc(b, ',');
        xpv_api_put_int(b, it->name_known ? (int64_t)name_local(nt, it->name) : -1);
        xpv_buf_putc(b, ',');
        xpv_api_put_int(b, it->depth);
        xpv_buf_putc(b, ']');
    }
    xpv_buf_puts(b, "]}");
}

static int put_answer(sqlite3 *db, int64_t id, window *w, xpv_buf *out)
{
    char hex[17];
    xpv_profile_id_hex(id, hex);
    xpv_buf_printf(out, "{\"profile\":\"%s\",\"start_us\":", hex);
    xpv_api_put_us(out, w->a);
    xpv_buf_puts(out, ",\"end_us\":");
    xpv_api_put_us(out, w->b);
    xpv_buf_printf(out, ",\"resolution\":%d,\"pixel_us\":", w->resolution);
    xpv_buf_json_double(out, w->pixel / 1000.0);
    xpv_buf_printf(out, ",\"truncated\":%s,\"tracks\":[", w->truncated ? "true" : "false");
    name_table nt = {0};
    int n = 0;
    for (size_t i = 0; i < w->ntracks; i++) {
        track_acc *t = &w->tracks[i];
        buckets_to_items(w, t);
        if (!t->nitems) continue;
        if (n++) xpv_buf_putc(out, ',');
        put_track(out, w, i, &nt);
    }
    xpv_buf_puts(out, "],\"names\":[");
    xpv_api_strings *strings = xpv_api_strings_open(db, id);
    for (size_t i = 0; i < nt.n; i++) {
        size_t len;
        const char *s = nt.ids[i] >= DERIVED_NAME
                            ? xpv_devrows_name(w->dev, (uint32_t)(nt.ids[i] - DERIVED_NAME), &len)
                            : xpv_api_string(strings, (uint32_t)nt.ids[i], &len);
        if (i) xpv_buf_putc(out, ',');
        xpv_buf_json_str(out, s, len);
    }
    xpv_buf_puts(out, "]}");
    int status = xpv_api_strings_status(strings, out);
    xpv_api_strings_free(strings);
    free(nt.ids);
    xpv_hindex_free(&nt.local);
    return status;
}

int xpv_api_window(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_api_profile_state *ps,
                   int64_t *a, int64_t *b, int *resolution, xpv_buf *out)
{
    int status = xpv_api_profile_state_get(db, id, ps, out);
    if (status != 200) return status;
    if (resolution) {
        *resolution = q->resolution > 0 ? q->resolution : 1000;
        if (*resolution > XPV_EVENTS_MAX_RESOLUTION)
            return xpv_api_error(out, 400, "resolution must be from 1 to %d",
                                 XPV_EVENTS_MAX_RESOLUTION);
    }
    *a = q->has_start ? (int64_t)floor(q->start_us * 1000.0) : ps->start_ns;
    *b = q->has_end ? (int64_t)ceil(q->end_us * 1000.0) : ps->end_ns;
    if (!ps->has_span && !(q->has_start && q->has_end)) *a = 0, *b = 1;
    if (*b <= *a) return xpv_api_error(out, 400, "end_us must be greater than start_us");
    return 200;
}

int xpv_api_events(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_buf *out)
{
    int64_t a, b;
    int resolution;
    xpv_api_profile_state ps;
    int status = xpv_api_window(db, id, q, &ps, &a, &b, &resolution, out);
    if (status != 200) return status;
    window w = {.a = a, .b = b, .resolution = resolution, .marks = q->marks};
    w.pixel = (double)(b - a) / resolution;
    status = load_tracks(db, id, q, &w, out);
    if (status == 200) status = collect(db, id, q, &w, out);
    if (status == 200) status = put_answer(db, id, &w, out);
    for (size_t i = 0; i < w.ntracks; i++) {
        free(w.tracks[i].items);
        free(w.tracks[i].buckets);
    }
    free(w.tracks);
    if (w.dev != &NO_ROWS) xpv_devrows_release(w.dev_cache, w.dev);
    return status;
}
