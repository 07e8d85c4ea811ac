/*
 * aggregate.c — the timeline's area selection: the slices of some tracks in
 * a time window, summed by name.
 *
 * What counts (docs/TIMELINE.md says the same):
 *  - a slice (an event with a duration, zero included) that overlaps the
 *    window [start, end] counts once, however much of it lies inside;
 *    instants, counters and flow records do not count;
 *  - its time is clipped to the window: min(end, window end) − max(start,
 *    window start). total, min, max and avg are of clipped times;
 *  - self time is the clipped time less the clipped time of the slices
 *    nested directly in it on the same track (a slice nests in the
 *    innermost slice that started before it, or at the same time and is
 *    longer, and ends no earlier);
 *  - percent is the row's share of the summed self time of all rows, so
 *    the rows add up to 100 and nested time is not counted twice.
 * Sums are integer nanoseconds. Tracks are read one at a time, so memory is
 * bounded by the busiest track's slices in the window. With the server's
 * resume marks (block_marks.h), a long sorted block is decoded only from
 * where its slices can reach the window to where they start past it.
 */
#include "api.h"
#include "api_util.h"
#include "../store/tracks.h"
#include "block_marks.h"
#include "../common/xpv_hindex.h"
#include "../common/xpv_lower_bound.h"
#include "../store/event_store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t start, end; /* the slice's own times */
    int64_t clipped, self;
    uint32_t name;
} slice;

typedef struct {
    uint32_t name;
    int64_t count, total, self, min, max;
} row;

typedef struct {
    int64_t a, b;
    int stop_past_end; /* the block being decoded is sorted */
    slice *s;
    size_t ns, caps;
    row *rows;
    size_t nrows, caprows;
    xpv_hindex row_of; /* name -> row index */
} agg;

#define STOP_DECODING 2

static int visit_slice(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    agg *g = ctx;
    (void)block, (void)index;
    if (ev->dur_ns < 0 || ev->ph == 'C' || ev->ph == 's' || ev->ph == 't' || ev->ph == 'f')
        return 0;
    if (ev->ts_ns > g->b) return g->stop_past_end ? STOP_DECODING : 0;
    int64_t end = ev->ts_ns + ev->dur_ns;
    if (end < g->a) return 0;
    if (g->ns == g->caps) {
        g->caps = g->caps ? g->caps * 2 : 1024;
        g->s = xpv_xrealloc(g->s, g->caps * sizeof *g->s);
    }
    int64_t lo = ev->ts_ns > g->a ? ev->ts_ns : g->a, hi = end < g->b ? end : g->b;
    int64_t clipped = hi > lo ? hi - lo : 0;
    g->s[g->ns++] = (slice){ev->ts_ns, end, clipped, clipped, ev->name};
    return 0;
}

static int by_start_longest(const void *pa, const void *pb)
{
    const slice *x = pa, *y = pb;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end);
}

/* Self time: each slice's clipped time leaves its parent's. */
static void nest(agg *g)
{
    xpv_sort(g->s, g->ns, sizeof *g->s, by_start_longest);
    size_t *stack = xpv_xmalloc((g->ns + 1) * sizeof *stack), depth = 0;
    for (size_t i = 0; i < g->ns; i++) {
        slice *s = &g->s[i];
        /* a slice starting with the one on top is no longer: it nests */
        while (depth && g->s[stack[depth - 1]].end <= s->start &&
               g->s[stack[depth - 1]].start != s->start)
            depth--;
        if (depth && g->s[stack[depth - 1]].end >= s->end)
            g->s[stack[depth - 1]].self -= s->clipped;
        stack[depth++] = i;
    }
    free(stack);
}

static row *row_of(agg *g, uint32_t name)
{
    uint64_t *at = xpv_hindex_put(&g->row_of, name, g->nrows);
    if (*at < g->nrows) return &g->rows[*at];
    g->rows = xpv_grow_to_index(g->rows, &g->caprows, g->nrows, sizeof *g->rows, 0);
    row *r = &g->rows[g->nrows++];
    *r = (row){name, 0, 0, 0, INT64_MAX, INT64_MIN};
    return r;
}

static void sum_track(agg *g)
{
    nest(g);
    for (size_t i = 0; i < g->ns; i++) {
        const slice *s = &g->s[i];
        row *r = row_of(g, s->name);
        r->count++;
        r->total += s->clipped;
        r->self += s->self;
        if (s->clipped < r->min) r->min = s->clipped;
        if (s->clipped > r->max) r->max = s->clipped;
    }
    g->ns = 0;
}

static int by_total_desc(const void *pa, const void *pb)
{
    const row *x = pa, *y = pb;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

static int put_rows(sqlite3 *db, int64_t id, agg *g, xpv_buf *out)
{
    int64_t self_sum = 0;
    for (size_t i = 0; i < g->nrows; i++)
        self_sum += g->rows[i].self;
    xpv_sort(g->rows, g->nrows, sizeof *g->rows, by_total_desc);
    xpv_api_strings *strings = xpv_api_strings_open(db, id);
    xpv_buf_puts(out, "\"rows\":[");
    for (size_t i = 0; i < g->nrows; i++) {
        const row *r = &g->rows[i];
        size_t len;
        const char *name = xpv_api_string(strings, r->name, &len);
        xpv_buf_puts(out, i ? ",{\"name\":" : "{\"name\":");
        xpv_buf_json_str(out, name, len);
        xpv_buf_printf(out, ",\"count\":%lld,\"total_us\":", (long long)r->count);
        xpv_api_put_us(out, r->total);
        xpv_buf_puts(out, ",\"self_us\":");
        xpv_api_put_us(out, r->self);
        xpv_buf_puts(out, ",\"avg_us\":");
        xpv_buf_json_double(out, (double)r->total / (double)r->count / 1000.0);
        xpv_buf_puts(out, ",\"min_us\":");
        xpv_api_put_us(out, r->min);
        xpv_buf_puts(out, ",\"max_us\":");
        xpv_api_put_us(out, r->max);
        xpv_buf_puts(out, ",\"percent\":");
        if (self_sum > 0)
            xpv_buf_json_double(out, 100.0 * (double)r->self / (double)self_sum);
        else
            xpv_buf_puts(out, "null");
        xpv_buf_putc(out, '}');
    }
    xpv_buf_putc(out, ']');
    int status = xpv_api_strings_status(strings, out);
    xpv_api_strings_free(strings);
    return status;
}

static int cmp_id(const void *pa, const void *pb)
{
    int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
    return (x > y) - (x < y);
}

/* Where to start decoding a block: a cached mark when the block is long and
 * sorted (slices of class lod that reach the window start after a - 2^lod),
 * else its first event. */
static const xpv_store_mark *resume_at(agg *g, xpv_block_marks *marks, sqlite3_stmt *st,
                                       xpv_store_mark *mark)
{
    g->stop_past_end = 0;
    int64_t n = sqlite3_column_int64(st, 4);
    if (!marks || n <= XPV_MARK_EVERY) return NULL;
    int lod = sqlite3_column_int(st, 1);
    xpv_block_key k = {sqlite3_column_int64(st, 0), n, sqlite3_column_bytes(st, 5),
                       sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)};
    int64_t lookback = lod >= 62 ? INT64_MAX : (lod > 0 ? (int64_t)1 << lod : 0);
    int64_t from = g->a > INT64_MIN + lookback ? g->a - lookback : INT64_MIN;
    int found = xpv_block_marks_find(marks, &k, from, mark);
    /* a damaged block is decoded whole, and the decoder reports it */
    if (found == XPV_MARKS_MISSING &&
        xpv_block_marks_add(marks, &k, sqlite3_column_blob(st, 5), (size_t)k.bytes, NULL) == 0)
        found = xpv_block_marks_find(marks, &k, from, mark);
    if (found != XPV_MARKS_FOUND) return NULL;
    g->stop_past_end = 1;
    return mark;
}

static int sum_tracks(sqlite3 *db, int64_t id, const int64_t *tracks, size_t n, agg *g,
                      xpv_block_marks *marks, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, lod, t_min, t_max, n, data FROM blocks WHERE profile_id=?1"
                           " AND track=?2 AND t_min <= ?4 AND t_max >= ?3",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 3, g->a);
    sqlite3_bind_int64(st, 4, g->b);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_bind_int64(st, 2, tracks[i]);
        int step;
        while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
            xpv_store_mark mark;
            const xpv_store_mark *from = resume_at(g, marks, st, &mark);
            rc = xpv_store_decode_from(sqlite3_column_blob(st, 5),
                                       (size_t)sqlite3_column_bytes(st, 5), (uint32_t)tracks[i],
                                       sqlite3_column_int64(st, 0), from, visit_slice, g, err);
            if (rc == STOP_DECODING) rc = 0;
        }
        if (rc == 0 && step != SQLITE_DONE) rc = xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(db));
        sqlite3_reset(st);
        sum_track(g);
    }
    sqlite3_finalize(st);
    return rc;
}

int xpv_api_aggregate(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_buf *out)
{
    int64_t a, b;
    xpv_api_profile_state ps;
    int status = xpv_api_window(db, id, q, &ps, &a, &b, NULL, out);
    if (status != 200) return status;
    size_t n = q->ntracks, nall;
    int64_t *owned; /* every track of the profile, by id */
    xpv_err err = {{0}};
    if (xpv_store_tracks_ids(db, id, &owned, &nall, &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg);
    for (size_t i = 0; q->tracks && i < n; i++)
        if (!xpv_sorted_has_i64(owned, nall, q->tracks[i])) {
            free(owned);
            return xpv_api_error(out, 400, "no track %lld in this profile",
                                 (long long)q->tracks[i]);
        }
    int64_t *asked = NULL; /* the named tracks, each once */
    if (q->tracks) {
        asked = xpv_xmalloc((n ? n : 1) * sizeof *asked);
        memcpy(asked, q->tracks, n * sizeof *asked);
        xpv_sort(asked, n, sizeof *asked, cmp_id);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!k || asked[k - 1] != asked[i]) asked[k++] = asked[i];
        n = k;
    } else {
        n = nall;
    }
    agg g = {.a = a, .b = b};
    if (sum_tracks(db, id, asked ? asked : owned, n, &g, q->marks, &err) != 0) {
        status = xpv_api_error(out, 500, "index: %s", err.msg);
    } else {
        xpv_api_put_profile_head(out, id, &ps);
        xpv_buf_puts(out, ",\"start_us\":");
        xpv_api_put_us(out, a);
        xpv_buf_puts(out, ",\"end_us\":");
        xpv_api_put_us(out, b);
        xpv_buf_puts(out, ",\"duration_us\":");
        xpv_api_put_us(out, b - a);
        xpv_buf_printf(out, ",\"tracks\":%zu,", n);
        status = put_rows(db, id, &g, out);
        if (status == 200) xpv_buf_putc(out, '}');
    }
    free(owned);
    free(asked);
    free(g.s);
    free(g.rows);
    xpv_hindex_free(&g.row_of);
    return status;
}
