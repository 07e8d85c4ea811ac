/*
 * launch_ranges.c — the correlation join in memory that grows with the
 * number of steps, not of launches.
 *
 * Correlation ids grow with time (within one id space: a process, or a
 * device in some producers), so sorted by id, the launches fall into long
 * runs that were all made at the same "position": inside step k (2k + 1),
 * or in the gap before step k (2k), or after the last step (2n). One pass
 * over the launches collects (id, position) pairs a chunk at a time, sorts
 * each chunk and keeps only its runs [lo, hi] -> position. The runs of all
 * chunks, sorted, must not overlap unless they agree on the position; then
 * a device event's id falls in the run of the one position whose launches
 * could have produced it: the same answer the per-launch table gives, for
 * every id that has a launch. (An id inside a run but without a launch of
 * its own joins that position too.) When runs disagree (ids launched at
 * different times interleave) or are too many, the caller falls back to
 * the per-launch table.
 */
#include "analysis_internal.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_PAIRS (1u << 20) /* 16 MB of (id, position) pairs at a time */
#define MAX_RUNS (1u << 20)

typedef struct {
    int64_t corr, pos;
} pair;

typedef struct {
    const xpv_step_list *steps;
    pair *buf;
    size_t n;
    xpv_corr_range *runs;
    size_t nruns, cap_runs;
    int too_many;
    size_t step_hint; /* launches of a track come in time order */
} range_ctx;

/* Position of time t (ps from base): 2k + 1 inside step k, else 2i where i
 * steps start at or before t. */
static int64_t position_of(const xpv_step_list *s, int64_t t, size_t *hint)
{
    long k = xpv_step_at(s, t, hint);
    if (k >= 0) return 2 * (int64_t)k + 1;
    return 2 * (int64_t)xpv_steps_started_by(s, t, hint);
}

static int pair_by_corr(const void *pa, const void *pb)
{
    const pair *a = pa, *b = pb;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int run_by_lo(const void *pa, const void *pb)
{
    const xpv_corr_range *a = pa, *b = pb;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void push_run(range_ctx *c, xpv_corr_range r)
{
    if (c->nruns == MAX_RUNS) {
        c->too_many = 1;
        return;
    }
    if (c->nruns == c->cap_runs) {
        c->cap_runs = c->cap_runs ? c->cap_runs * 2 : 256;
        c->runs = xpv_xrealloc(c->runs, c->cap_runs * sizeof *c->runs);
    }
    c->runs[c->nruns++] = r;
}

/* Sorts the pairs gathered so far and keeps their runs. */
static void flush_pairs(range_ctx *c)
{
    xpv_sort(c->buf, c->n, sizeof *c->buf, pair_by_corr);
    for (size_t i = 0; i < c->n;) {
        size_t j = i + 1;
        while (j < c->n && c->buf[j].pos == c->buf[i].pos)
            j++;
        push_run(c, (xpv_corr_range){c->buf[i].corr, c->buf[j - 1].corr, c->buf[i].pos});
        i = j;
    }
    c->n = 0;
}

static int range_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    range_ctx *c = ctx;
    if (ev->kind != XPV_KIND_LAUNCH || ev->corr < 0) return 0;
    if (c->n == CHUNK_PAIRS) flush_pairs(c);
    int64_t t = xpv_ps_since(c->steps->base_ns, ev->ts_ns);
    c->buf[c->n++] = (pair){ev->corr, position_of(c->steps, t, &c->step_hint)};
    return 0;
}

/* Sorts the runs and merges those of one position; 0 when two positions'
 * runs overlap. */
static int merge_runs(range_ctx *c)
{
    xpv_sort(c->runs, c->nruns, sizeof *c->runs, run_by_lo);
    size_t out = 0;
    for (size_t i = 0; i < c->nruns; i++) {
        xpv_corr_range *last = out ? &c->runs[out - 1] : NULL;
        if (last && c->runs[i].lo <= last->hi) {
            if (c->runs[i].pos != last->pos) return 0;
            if (c->runs[i].hi > last->hi) last->hi = c->runs[i].hi;
        } else if (last && c->runs[i].pos == last->pos && c->runs[i].lo == last->hi + 1) {
            last->hi = c->runs[i].hi;
        } else {
            c->runs[out++] = c->runs[i];
        }
    }
    c->nruns = out;
    return 1;
}

int xpv_launch_ranges_build(xpv_launches *l, const xpv_analysis_input *in,
                            const uint8_t *launch_tracks, const xpv_step_list *steps, xpv_err *err)
{
    range_ctx c = {.steps = steps};
    c.buf = xpv_xmalloc(CHUNK_PAIRS * sizeof *c.buf);
    int rc = 0;
    for (size_t t = 0; t < in->ntracks && rc == 0; t++) {
        if (!launch_tracks[t]) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, in->profile_id);
        q.track = (int64_t)t;
        q.kinds = XPV_KIND_BIT(XPV_KIND_LAUNCH);
        q.skip_args = 1;
        if (xpv_analysis_scan(in, &q, range_visit, &c, err) < 0) rc = -1;
    }
    if (rc == 0) flush_pairs(&c);
    free(c.buf);
    int ok = rc == 0 && !c.too_many && merge_runs(&c);
    if (ok) {
        l->ranges = c.runs;
        l->nranges = c.nruns;
    } else {
        free(c.runs);
    }
    return rc < 0 ? -1 : ok;
}

long xpv_launches_step(const xpv_launches *l, const xpv_step_list *steps, int64_t corr,
                       size_t *hint)
{
    if (l->ranges) {
        /* device events of a stream mostly come in id order: the run that
         * held the previous id is tried first, then all are bisected */
        size_t i = *hint;
        if (i >= l->nranges || corr < l->ranges[i].lo || corr > l->ranges[i].hi) {
            size_t lo = 0, hi = l->nranges;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (l->ranges[mid].lo <= corr)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == 0 || corr > l->ranges[lo - 1].hi) return -2;
            *hint = i = lo - 1;
        }
        int64_t p = l->ranges[i].pos;
        return p % 2 ? (long)(p / 2) : -1;
    }
    const xpv_launch_rec *r = xpv_launches_find(l, corr, hint);
    if (!r) return -2;
    return xpv_step_at(steps, xpv_ps_since(steps->base_ns, r->ts_ns), NULL);
}
