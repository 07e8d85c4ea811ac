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
 * every id that has a launch. Runs are maximal: in id order, all launch
 * ids from one of a position to the next of another; an id without a
 * launch of its own between two of the same position joins that position.
 * When runs disagree (ids launched at different times interleave) or are
 * too many, the caller falls back to the per-launch table.
 *
 * When steps do not overlap, positions only grow with time, so a capture
 * segment (capture.c) whose earliest start and latest end lie at one
 * position is a run by itself: its smallest and largest launch id, with
 * no event read. Only segments across a step boundary are decoded. If such
 * a run holds an id launched elsewhere at another position, every launch
 * is read instead: the result is the same either way.
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

static int steps_disjoint(const xpv_step_list *s)
{
    for (size_t k = 1; k < s->n; k++)
        if (s->v[k - 1].end_ps > s->v[k].start_ps) return 0;
    return 1;
}

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

/* xpv_capture_seg_fn: a segment at one position is one run, unread. */
static int range_settled(void *ctx, const xpv_capture_seg *seg)
{
    range_ctx *c = ctx;
    if (seg->nlaunch == 0) return 1; /* nothing range_visit would keep */
    int64_t base = c->steps->base_ns;
    int64_t first = position_of(c->steps, xpv_ps_since(base, seg->t_min), &c->step_hint);
    int64_t last = position_of(c->steps, xpv_ps_since(base, seg->t_max), &c->step_hint);
    if (first != last) return 0;
    push_run(c, (xpv_corr_range){seg->launch_lo, seg->launch_hi, first});
    return 1;
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

/* Sorts the runs and merges neighbours of one position; 0 when two
 * positions' runs overlap. */
static int merge_runs(range_ctx *c)
{
    xpv_sort(c->runs, c->nruns, sizeof *c->runs, run_by_lo);
    size_t out = 0;
    for (size_t i = 0; i < c->nruns; i++) {
        xpv_corr_range *last = out ? &c->runs[out - 1] : NULL;
        if (last && c->runs[i].lo <= last->hi && c->runs[i].pos != last->pos) return 0;
        if (last && c->runs[i].pos == last->pos) {
            if (c->runs[i].hi > last->hi) last->hi = c->runs[i].hi;
        } else {
            c->runs[out++] = c->runs[i];
        }
    }
    c->nruns = out;
    return 1;
}

static void launch_query(const xpv_analysis_input *in, size_t track, xpv_store_query *q)
{
    xpv_store_query_all(q, in->profile_id);
    q->track = (int64_t)track;
    q->kinds = XPV_KIND_BIT(XPV_KIND_LAUNCH);
    q->skip_args = 1;
}

int xpv_launch_ranges_needs_no_store(const xpv_analysis_input *in)
{
    xpv_store_query q;
    launch_query(in, 0, &q);
    return in->capture && xpv_capture_covers(in->capture, &q);
}

/* Gathers the runs of every launch track: settled segments as they are,
 * the others launch by launch; 1 when they merge. */
static int collect_runs(range_ctx *c, const xpv_analysis_input *in, const uint8_t *launch_tracks,
                        int settle, xpv_err *err)
{
    c->n = c->nruns = 0;
    c->too_many = 0;
    c->step_hint = 0;
    for (size_t t = 0; t < in->ntracks; t++) {
        if (!launch_tracks[t]) continue;
        xpv_store_query q;
        launch_query(in, t, &q);
        int rc = settle ? xpv_capture_scan_unsettled(in->capture, &q, range_settled, range_visit, c)
                        : xpv_analysis_scan(in, &q, range_visit, c, err);
        if (rc < 0) return -1;
    }
    flush_pairs(c);
    return !c->too_many && merge_runs(c);
}

int xpv_launch_ranges_build(xpv_launches *l, const xpv_analysis_input *in,
                            const uint8_t *launch_tracks, const xpv_step_list *steps, xpv_err *err)
{
    range_ctx c = {.steps = steps};
    c.buf = xpv_xmalloc(CHUNK_PAIRS * sizeof *c.buf);
    int settle = xpv_launch_ranges_needs_no_store(in) && steps_disjoint(steps);
    int ok = collect_runs(&c, in, launch_tracks, settle, err);
    if (ok == 0 && settle) ok = collect_runs(&c, in, launch_tracks, 0, err);
    free(c.buf);
    if (ok == 1) {
        l->ranges = c.runs;
        l->nranges = c.nruns;
    } else {
        free(c.runs);
    }
    return ok;
}

long xpv_launches_step(const xpv_launches *l, const xpv_step_list *steps, int64_t corr,
                       size_t *hint)
{
    if (l->ranges) {
        /* device events of a stream mostly come in id order: the run that
         * held the previous id is tried first, then all are bisected */
        size_t i = *hint;
        if (i >= l->nranges || corr < l->ranges[i].lo || corr > l->ranges[i].hi) {
            size_t lo = xpv_upper_bound_i64(l->ranges, l->nranges, sizeof *l->ranges,
                                            offsetof(xpv_corr_range, lo), corr);
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
