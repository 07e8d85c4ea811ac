/*
 * launch_ranges.c — the correlation join in O(steps) memory.
 *
 * Correlation ids grow with time, so the launches made inside one step
 * usually hold one contiguous block of ids, and so do the launches made in
 * the gap between two steps. One pass over the launches records, per
 * position (step k -> 2k + 1, the gap before step k -> 2k, after the last
 * step -> 2n), the lowest and highest id launched there. When these ranges
 * are disjoint and ordered like the positions, a device event's id falls in
 * the range of the one position whose launches could have produced it: the
 * same answer the per-launch table gives, for every id that has a launch,
 * with no table at all. (An id inside a range but without a launch of its
 * own joins that position too.) When the ranges overlap (ids restarting,
 * several processes), the caller falls back to the per-launch table.
 */
#include "analysis_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const xpv_step_list *steps;
    int64_t *lo, *hi; /* per position; lo > hi when empty */
} range_ctx;

/* Position of time t (ps from base): 2k + 1 inside step k, else 2i where i
 * steps start at or before t. */
static size_t position_of(const xpv_step_list *s, int64_t t)
{
    long k = xpv_step_at(s, t);
    if (k >= 0) return 2 * (size_t)k + 1;
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].start_ps <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 2 * lo;
}

static int range_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    range_ctx *c = ctx;
    if (ev->kind != XPV_KIND_LAUNCH || ev->corr < 0) return 0;
    size_t p = position_of(c->steps, (ev->ts_ns - c->steps->base_ns) * 1000);
    if (ev->corr < c->lo[p]) c->lo[p] = ev->corr;
    if (ev->corr > c->hi[p]) c->hi[p] = ev->corr;
    return 0;
}

/* Keeps the non-empty ranges; 0 when they are not disjoint and ordered. */
static int compact(xpv_launches *l, range_ctx *c, size_t npos)
{
    l->nranges = 0;
    for (size_t p = 0; p < npos; p++) {
        if (c->lo[p] > c->hi[p]) continue;
        if (l->nranges && c->lo[p] <= l->ranges[l->nranges - 1].hi) return 0;
        l->ranges[l->nranges++] = (xpv_corr_range){c->lo[p], c->hi[p], (int64_t)p};
    }
    return 1;
}

int xpv_launch_ranges_build(xpv_launches *l, const xpv_analysis_input *in,
                            const uint8_t *launch_tracks, const xpv_step_list *steps, xpv_err *err)
{
    size_t npos = 2 * steps->n + 1;
    range_ctx c = {.steps = steps};
    c.lo = xpv_xmalloc(npos * sizeof *c.lo);
    c.hi = xpv_xmalloc(npos * sizeof *c.hi);
    for (size_t p = 0; p < npos; p++)
        c.lo[p] = INT64_MAX, c.hi[p] = INT64_MIN;
    int rc = 0;
    for (size_t t = 0; t < in->ntracks && rc == 0; t++) {
        if (!launch_tracks[t]) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, in->profile_id);
        q.track = (int64_t)t;
        if (xpv_store_scan(in->db, &q, range_visit, &c, err) < 0) rc = -1;
    }
    l->ranges = xpv_xmalloc(npos * sizeof *l->ranges);
    int ok = rc == 0 && compact(l, &c, npos);
    if (!ok) {
        free(l->ranges);
        l->ranges = NULL;
        l->nranges = 0;
    }
    free(c.lo);
    free(c.hi);
    return rc < 0 ? -1 : ok;
}

long xpv_launches_step(const xpv_launches *l, const xpv_step_list *steps, int64_t corr,
                       size_t *hint)
{
    if (l->ranges) {
        size_t lo = 0, hi = l->nranges;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (l->ranges[mid].lo <= corr)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0 || corr > l->ranges[lo - 1].hi) return -2;
        int64_t p = l->ranges[lo - 1].pos;
        return p % 2 ? (long)(p / 2) : -1;
    }
    const xpv_launch_rec *r = xpv_launches_find(l, corr, hint);
    if (!r) return -2;
    return xpv_step_at(steps, (r->ts_ns - steps->base_ns) * 1000);
}
