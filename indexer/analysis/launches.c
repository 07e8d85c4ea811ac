/*
 * launches.c — host launches by correlation id, for joining device events
 * to steps and, in PyTorch traces, kernels to the CPU op that launched them.
 *
 * Built at finish by scanning the host tracks that hold LAUNCH events (a
 * correlation id >= 0). At most `limit` launches are kept (24 bytes each);
 * device events whose launch was dropped fall back to the time join, and
 * the caller says so in a warning.
 *
 * The CPU op of a launch is the innermost `cpu_op` (older traces:
 * `Operator`) slice on the launch's own thread that contains the launch's
 * start: ops are swept in start order with a stack of open ops, so an op
 * nested in another wins. Step markers themselves (ProfilerStep#N, also
 * cat cpu_op) are not ops.
 */
#include "analysis_internal.h"
#include "../../common/xpv_msort.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t start, end;
    uint32_t name;
} cpu_op;

typedef struct {
    const xpv_analysis_input *in;
    xpv_launches *l;
    const xpv_step_list *steps; /* keep only launches inside a step, or NULL */
    int link_ops;
    xpv_hindex cat_is_op; /* cat id -> 1 for cpu_op / Operator */
    xpv_launch_rec *launches;
    size_t nl, capl;
    cpu_op *ops;
    size_t nops, capops;
    size_t step_hint;
} track_ctx;

static void push_launch(xpv_launches *l, xpv_launch_rec r)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        if (l->cap > l->limit) l->cap = l->limit;
        l->r = xpv_xrealloc(l->r, l->cap * sizeof *l->r);
    }
    l->r[l->n++] = r;
}

static int is_op_category(track_ctx *c, uint32_t cat)
{
    static const char *const op_categories[] = {"cpu_op", "Operator", NULL};
    return xpv_analysis_string_is(c->in, &c->cat_is_op, cat, op_categories);
}

static int track_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    track_ctx *c = ctx;
    if (ev->kind == XPV_KIND_LAUNCH && ev->corr >= 0) {
        if (c->l->n + c->nl >= c->l->limit) {
            c->l->dropped++;
            return 0;
        }
        if (c->steps &&
            xpv_step_at(c->steps, xpv_ps_since(c->steps->base_ns, ev->ts_ns), &c->step_hint) < 0)
            return 0;
        if (!c->link_ops) { /* no sweep needed: straight into the table */
            push_launch(c->l, (xpv_launch_rec){ev->corr, ev->ts_ns, 0});
            return 0;
        }
        if (c->nl == c->capl) {
            c->capl = c->capl ? c->capl * 2 : 1024;
            c->launches = xpv_xrealloc(c->launches, c->capl * sizeof *c->launches);
        }
        c->launches[c->nl++] = (xpv_launch_rec){ev->corr, ev->ts_ns, 0};
    } else if (c->link_ops && ev->kind != XPV_KIND_STEP && ev->dur_ns > 0 && ev->cat &&
               is_op_category(c, ev->cat)) {
        if (c->nops == c->capops) {
            c->capops = c->capops ? c->capops * 2 : 1024;
            c->ops = xpv_xrealloc(c->ops, c->capops * sizeof *c->ops);
        }
        c->ops[c->nops++] = (cpu_op){ev->ts_ns, ev->ts_ns + ev->dur_ns, ev->name};
    }
    return 0;
}

/* The sorts are stable (xpv_msort.h): equal keys keep their scan order,
 * as they did under glibc's qsort, so that ops of one span and launches of
 * one id at one time resolve as before. */

static int launch_time_less(const xpv_launch_rec *a, const xpv_launch_rec *b)
{
    return a->ts_ns < b->ts_ns;
}

/* By id, and the launches of one id by time (xpv_launches_find). */
static int launch_corr_less(const xpv_launch_rec *a, const xpv_launch_rec *b)
{
    return a->corr != b->corr ? a->corr < b->corr : a->ts_ns < b->ts_ns;
}

/* Outer ops first: by start, then longest first. */
static int op_less(const cpu_op *a, const cpu_op *b)
{
    return a->start != b->start ? a->start < b->start : a->end > b->end;
}

XPV_MSORT_DEFINE(sort_launches_by_time, xpv_launch_rec, launch_time_less)
XPV_MSORT_DEFINE(sort_launches_by_corr, xpv_launch_rec, launch_corr_less)
XPV_MSORT_DEFINE(sort_ops, cpu_op, op_less)

/* 1 when two ops of one span have different names: their order, which
 * the sort keeps from the scan, then decides the innermost. */
static int ops_tied(const cpu_op *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i].start == v[i - 1].start && v[i].end == v[i - 1].end && v[i].name != v[i - 1].name)
            return 1;
    return 0;
}

/* Links each launch of the track to its op; returns 1 (linking nothing)
 * when strict and ops_tied, else 0. */
static int link_track_ops(track_ctx *c, int strict)
{
    sort_ops(c->ops, c->nops);
    if (strict && ops_tied(c->ops, c->nops)) return 1;
    sort_launches_by_time(c->launches, c->nl);
    size_t *stack = xpv_xmalloc((c->nops ? c->nops : 1) * sizeof *stack), depth = 0, next = 0;
    for (size_t i = 0; i < c->nl; i++) {
        int64_t ts = c->launches[i].ts_ns;
        while (next < c->nops && c->ops[next].start <= ts) {
            while (depth && c->ops[stack[depth - 1]].end <= c->ops[next].start)
                depth--;
            stack[depth++] = next++;
        }
        while (depth && c->ops[stack[depth - 1]].end <= ts)
            depth--;
        if (depth) c->launches[i].op = c->ops[stack[depth - 1]].name;
    }
    free(stack);
    return 0;
}

static void keep(xpv_launches *l, const track_ctx *c)
{
    for (size_t i = 0; i < c->nl; i++)
        push_launch(l, c->launches[i]);
}

/* The launches and ops of track t: with `fast`, launches from the capture
 * and ops from the spans (arrival order), else both from the store (scan
 * order). 1 when the fast read cannot promise the store's answer: a launch
 * past the limit (which ones are kept depends on the order), or ops of one
 * span with different names. */
static int read_track(track_ctx *c, size_t t, int fast, xpv_err *err)
{
    c->nl = c->nops = 0;
    xpv_store_query q;
    xpv_store_query_all(&q, c->in->profile_id);
    q.track = (int64_t)t;
    /* CPU ops (for linking) are of kind OTHER; without linking only
     * launch blocks need reading. */
    q.kinds =
        XPV_KIND_BIT(XPV_KIND_LAUNCH) | (c->link_ops && !fast ? XPV_KIND_BIT(XPV_KIND_OTHER) : 0);
    q.skip_args = 1;
    int64_t dropped = c->l->dropped;
    if (xpv_analysis_scan(c->in, &q, track_visit, c, err) < 0) return -1;
    if (fast) xpv_spans_scan(c->in->spans, (uint32_t)t, track_visit, c);
    if (fast && c->l->dropped != dropped) return 1;
    return c->link_ops && link_track_ops(c, fast);
}

static int build(xpv_launches *l, track_ctx *c, const uint8_t *launch_tracks, int fast,
                 xpv_err *err)
{
    for (size_t t = 0; t < c->in->ntracks; t++) {
        if (!launch_tracks[t]) continue;
        int rc = read_track(c, t, fast, err);
        if (rc) return rc;
        keep(l, c);
    }
    return 0;
}

/* With link_ops the fast read serves when the capture holds the launches
 * and the spans hold the ops: no host block of the store is decoded. */
static int can_read_fast(const xpv_analysis_input *in, int link_ops)
{
    return link_ops && xpv_launches_needs_no_store(in) && in->spans && !in->spans->overflowed;
}

int xpv_launches_build(xpv_launches *l, const xpv_analysis_input *in, const uint8_t *launch_tracks,
                       int link_ops, const xpv_step_list *steps, size_t limit, xpv_err *err)
{
    memset(l, 0, sizeof *l);
    l->limit = limit;
    l->has_ops = link_ops;
    track_ctx c = {.in = in, .l = l, .steps = link_ops ? NULL : steps, .link_ops = link_ops};
    int fast = can_read_fast(in, link_ops);
    int rc = build(l, &c, launch_tracks, fast, err);
    if (rc == 1) { /* the store's order decides: read it */
        l->n = 0;
        l->dropped = 0;
        rc = build(l, &c, launch_tracks, 0, err);
    }
    free(c.launches);
    free(c.ops);
    xpv_hindex_free(&c.cat_is_op);
    sort_launches_by_corr(l->r, l->n);
    return rc;
}

/* Device events of one track come roughly in launch order, so the search
 * gallops from the previous answer (*hint) instead of bisecting all. An id
 * launched more than once is rare (a trace made of others, end to end): its
 * launches are searched by time the same way. */
const xpv_launch_rec *xpv_launches_find(const xpv_launches *l, int64_t corr, int64_t ts_ns,
                                        size_t *hint)
{
    if (!l->n) return NULL;
    size_t h = *hint < l->n ? *hint : 0, lo, hi;
    if (l->r[h].corr < corr) {
        size_t step = 1;
        lo = h + 1;
        while (h + step < l->n && l->r[h + step].corr < corr)
            lo = h + step + 1, step *= 2;
        hi = h + step < l->n ? h + step + 1 : l->n;
    } else {
        size_t step = 1;
        hi = h + 1;
        while (step <= h && l->r[h - step].corr >= corr)
            hi = h - step + 1, step *= 2;
        lo = step <= h ? h - step : 0;
    }
    size_t i = lo + xpv_lower_bound_i64(l->r + lo, hi - lo, sizeof *l->r,
                                        offsetof(xpv_launch_rec, corr), corr);
    if (i >= l->n || l->r[i].corr != corr) {
        *hint = i;
        return NULL;
    }
    /* Past i, "of this id and launched by ts_ns" holds and then never
     * again (sorted by id, then time): gallop, then bisect, so that an id
     * launched n times costs log n, not n. */
    size_t ok = i, bad = i + 1, step = 1;
    while (bad < l->n && l->r[bad].corr == corr && l->r[bad].ts_ns <= ts_ns) {
        ok = bad;
        bad = bad + step < l->n ? bad + step : l->n;
        step *= 2;
    }
    while (bad - ok > 1) {
        size_t mid = ok + (bad - ok) / 2;
        if (l->r[mid].corr == corr && l->r[mid].ts_ns <= ts_ns)
            ok = mid;
        else
            bad = mid;
    }
    *hint = ok;
    return &l->r[ok];
}

void xpv_launches_free(xpv_launches *l)
{
    free(l->r);
    memset(l, 0, sizeof *l);
}

int xpv_launches_needs_no_store(const xpv_analysis_input *in)
{
    xpv_store_query q;
    xpv_store_query_all(&q, in->profile_id);
    q.kinds = XPV_KIND_BIT(XPV_KIND_LAUNCH);
    q.skip_args = 1;
    return in->capture && xpv_capture_covers(in->capture, &q);
}
