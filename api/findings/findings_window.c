/*
 * findings_window.c — one step window's device work, measured: per device
 * the union of its compute, collectives and all its work (so overlapping
 * streams count once), the collective time no compute overlaps, copies,
 * kernel counts and the idle gaps between them, launch latencies by
 * correlation id, and the time the devices wait for the host's input work.
 *
 * CUDA graphs: the device events of one correlation id are one launch; when
 * several kernels share the id, or its launch is named a graph launch, it
 * is a graph execution (XLA command buffers, PyTorch graph replays). It
 * counts as one launch unit, its latency is from the launch to its first
 * kernel, idle inside it is the device's own, and a step's time with no
 * device work and no graph running is the host's (host_wait).
 *
 * An event belongs to the window it overlaps for unions (clipped to the
 * window) and to the window it starts in for counts, so a step's numbers
 * never include another step's time and every event is counted once.
 * findings_batch.c reads the events and hands each device's to us.
 */
#define _GNU_SOURCE
#include "findings_internal.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/xpv_event.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LATENCY (1u << 21)

static void push(xpv_fivals *l, int64_t s, int64_t e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = xpv_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (xpv_tool_ival){s, e};
}

static int launch_cmp(const void *a, const void *b)
{
    const xpv_flaunch *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int64_t ivals_len(const xpv_fivals *l)
{
    int64_t t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += l->v[i].end - l->v[i].start;
    return t;
}

static void push_latency(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
    if (*n >= MAX_LATENCY) return;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *v = xpv_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = x;
}

static int corr_cmp(const void *a, const void *b)
{
    const xpv_fcorr *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

static const xpv_flaunch *launch_of(const xpv_fscan *ws, int64_t corr)
{
    if (!ws->nl) return NULL;
    xpv_flaunch key = {corr, 0, 0};
    return xpv_sorted_find(&key, ws->l, ws->nl, sizeof *ws->l, launch_cmp);
}

/* One correlation id's device events g[0..n) (by start): a graph when
 * several kernels share it or its launch is named one. A graph is one
 * launch unit, and its latency is from the launch to its first kernel. */
static void corr_group(xpv_fscan *ws, xpv_fwindow *w, const xpv_fcorr *g, size_t n)
{
    xpv_fctx *c = ws->c;
    const xpv_flaunch *l = launch_of(ws, g[0].corr);
    int64_t nk = 0, kt = 0, shorts = 0, end = g[0].e;
    double short_ps = c->cfg->launch_short_kernel_us * 1e6;
    for (size_t i = 0; i < n; i++) {
        if (g[i].e > end) end = g[i].e;
        if (!g[i].kernel) continue;
        nk++, kt += g[i].e - g[i].s;
        shorts += (double)(g[i].e - g[i].s) < short_ps;
    }
    int graph = nk >= 2 || (nk && l && l->graph);
    size_t timed = graph ? 1 : n; /* a graph: its first event only */
    for (size_t i = 0; l && i < timed; i++) {
        if (g[i].s < l->t) continue;
        c->latency_seen++;
        push_latency(&c->latency, &c->nlatency, &c->latency_cap, g[i].s - l->t);
    }
    if (!graph) return;
    if (l && g[0].s >= l->t)
        push_latency(&c->graph_latency, &c->ngraph_latency, &c->graph_latency_cap, g[0].s - l->t);
    w->graph_launches++, w->graph_kernels += nk;
    w->units -= nk - 1, w->short_units -= shorts - ((double)(end - g[0].s) < short_ps);
    w->unit_time += (end - g[0].s) - kt;
    push(&ws->graph, g[0].s, end);
}

/* Groups the device's counted events by correlation id (ws->cg). */
static void corr_groups(xpv_fscan *ws, xpv_fwindow *w)
{
    xpv_sort(ws->cg, ws->ncg, sizeof *ws->cg, corr_cmp);
    for (size_t i = 0, j; i < ws->ncg; i = j) {
        for (j = i + 1; j < ws->ncg && ws->cg[j].corr == ws->cg[i].corr; j++)
            ;
        corr_group(ws, w, ws->cg + i, j - i);
    }
    ws->ncg = 0;
}

static void add_corr(xpv_fscan *ws, const xpv_fitem *it)
{
    if (ws->ncg == ws->cg_cap) {
        ws->cg_cap = ws->cg_cap ? ws->cg_cap * 2 : 1024;
        ws->cg = xpv_xrealloc(ws->cg, ws->cg_cap * sizeof *ws->cg);
    }
    ws->cg[ws->ncg++] = (xpv_fcorr){it->corr, it->s, it->e, it->kind == XPV_KIND_KERNEL};
}

/* Counts and evidence of an event starting in the window. */
static void count_item(xpv_fscan *ws, xpv_fwindow *w, const xpv_fitem *it)
{
    xpv_fctx *c = ws->c;
    int64_t d = it->e - it->s;
    if (it->kind == XPV_KIND_KERNEL) {
        int is_short = (double)d < c->cfg->launch_short_kernel_us * 1e6;
        w->kernels++, w->units++;
        w->kernel_time += d, w->unit_time += d;
        w->short_kernels += is_short, w->short_units += is_short;
    }
    if (it->kind == XPV_KIND_MEMCPY_H2D) w->h2d += d;
    if (it->kind == XPV_KIND_MEMCPY_D2H) w->d2h += d;
    if (it->kind == XPV_KIND_MEMCPY_H2D || it->kind == XPV_KIND_MEMCPY_D2H)
        xpv_fref_longest(&w->copy_ev, it->s, it->e, it->block, it->index);
    for (int i = 0; i < c->nhot; i++)
        if (it->name == c->hot_name[i])
            xpv_fref_longest(&c->hot_ev[i], it->s, it->e, it->block, it->index);
    if (it->corr >= 0) add_corr(ws, it);
}

/* The largest gap between a device's busy intervals, as evidence. */
static void note_gap(xpv_fwindow *w, const xpv_fivals *busy)
{
    for (size_t i = 1; i < busy->n; i++) {
        int64_t a = busy->v[i - 1].end, b = busy->v[i].start;
        if (!w->idle_ev.set || b - a > w->idle_ev.end - w->idle_ev.start)
            w->idle_ev = (xpv_fref){1, -1, 0, a, b};
    }
}

/* Without steps the slices are one timeline: the idle gap from a device's
 * last work in an earlier slice to its first in this one is the device's
 * too (work cut at a slice's edge leaves no gap). */
static void between_slices(xpv_fctx *c, xpv_fwindow *w, int dev, const xpv_fivals *busy)
{
    if (dev < 0) return;
    size_t old = c->ndev;
    c->dev_last = xpv_grow_to_index(c->dev_last, &c->ndev, (size_t)dev, sizeof(int64_t), 0);
    for (size_t i = old; i < c->ndev; i++)
        c->dev_last[i] = -1;
    int64_t last = c->dev_last[dev], first = busy->v[0].start;
    c->dev_last[dev] = busy->v[busy->n - 1].end;
    if (c->has_steps || last < 0 || first <= last) return;
    w->active += first - last;
    w->idle_in_active += first - last, w->launch_idle += first - last;
    w->gaps++, w->launch_gaps++;
}

/* The device's idle between its first and last work, less what falls
 * inside graph executions (the device's own scheduling, not launches). */
static void launch_idle(xpv_fscan *ws, xpv_fwindow *w, int64_t w0, int64_t w1, int64_t idle)
{
    xpv_fivals *g = &ws->graph, *b = &ws->busy;
    for (size_t i = 0; i < g->n; i++) {
        if (g->v[i].start < w0) g->v[i].start = w0;
        if (g->v[i].end > w1) g->v[i].end = w1;
    }
    g->n = xpv_tool_ivals_normalize(g->v, g->n);
    int64_t in_graph = 0, gaps_in_graph = 0;
    for (size_t i = 1; g->n && i < b->n; i++) {
        int64_t a = b->v[i - 1].end, z = b->v[i].start;
        int64_t covered = xpv_tool_ivals_len_in(g->v, g->n, a, z);
        in_graph += covered;
        gaps_in_graph += covered == z - a;
    }
    w->launch_idle += idle - in_graph;
    w->launch_gaps += (int64_t)b->n - 1 - gaps_in_graph;
    for (size_t i = 0; i < g->n; i++)
        push(&ws->gall, g->v[i].start, g->v[i].end);
}

void xpv_findings_window_device(xpv_fscan *ws, xpv_fwindow *w, int64_t w0, int64_t w1,
                                const xpv_fitem *v, size_t n)
{
    int any = 0;
    ws->comp.n = ws->coll.n = ws->busy.n = ws->graph.n = ws->ncg = 0;
    for (size_t i = 0; i < n; i++) {
        const xpv_fitem *it = &v[i];
        assert(it->s < w1);
        int64_t s = it->s < w0 ? w0 : it->s, e = it->e > w1 ? w1 : it->e;
        if (it->s >= w0) count_item(ws, w, it), any = 1;
        if (e <= s) continue;
        any = 1;
        push(&ws->busy, s, e);
        push(&ws->all, s, e);
        if (it->cls & XPV_FN_FEED) push(&ws->feed, s, e);
        if (it->kind != XPV_KIND_KERNEL && it->kind != XPV_KIND_XLA_OP) continue;
        if (it->cls & XPV_FN_COLLECTIVE) {
            push(&ws->coll, s, e);
            xpv_fref_longest(&w->exposed_ev, it->s, it->e, it->block, it->index);
        } else {
            push(&ws->comp, s, e);
        }
    }
    corr_groups(ws, w);
    if (!any) return;
    ws->comp.n = xpv_tool_ivals_normalize(ws->comp.v, ws->comp.n);
    ws->coll.n = xpv_tool_ivals_normalize(ws->coll.v, ws->coll.n);
    ws->busy.n = xpv_tool_ivals_normalize(ws->busy.v, ws->busy.n);
    w->dev_window += w1 - w0;
    w->collective += ivals_len(&ws->coll);
    w->exposed +=
        xpv_tool_wait_len(ws->coll.v, ws->coll.n, ws->comp.v, ws->comp.n, NULL, 0, w0, w1);
    int64_t busy = ivals_len(&ws->busy);
    w->busy += busy;
    if (ws->busy.n) {
        between_slices(ws->c, w, v[0].dev, &ws->busy);
        int64_t span = ws->busy.v[ws->busy.n - 1].end - ws->busy.v[0].start;
        w->active += span;
        w->idle_in_active += span - busy;
        w->gaps += (int64_t)ws->busy.n - 1;
        launch_idle(ws, w, w0, w1, span - busy);
        note_gap(w, &ws->busy);
    }
}

/* With graphs, and steps: the window's time in which no device works and
 * no graph runs is the host's (findings_host.c says on what), in the parts
 * of the step the host figures cover (host_parts). */
static void host_wait(xpv_fscan *ws, xpv_fwindow *w)
{
    xpv_fivals *a = &ws->all;
    for (size_t i = 0; i < ws->gall.n; i++)
        push(a, ws->gall.v[i].start, ws->gall.v[i].end);
    a->n = xpv_tool_ivals_normalize(a->v, a->n);
    for (size_t p = 0; p < ws->parts.n; p++) {
        int64_t t = ws->parts.v[p].start, end = ws->parts.v[p].end;
        for (size_t i = 0; i <= a->n; i++) {
            int64_t next = i < a->n ? a->v[i].start : end;
            if (next > end) next = end;
            if (next > t) {
                w->host_wait += next - t;
                xpv_findings_host_gap(ws->c, t, next);
            }
            if (i < a->n && a->v[i].end > t) t = a->v[i].end;
        }
    }
}

/* The parts of w the host figures cover, into ws->parts: [start, end), or
 * for a step the devices ran apart the union of their windows (spans of
 * neighbouring steps overlap then, and [start, end) is a mean no device
 * ran); w->host_len their length. */
static void host_parts(xpv_fscan *ws, xpv_fwindow *w)
{
    xpv_fivals *p = &ws->parts;
    p->n = 0;
    if (!w->ndw) push(p, w->start, w->end);
    for (size_t i = w->dw_at; i < w->dw_at + w->ndw; i++)
        push(p, ws->c->dw[i].start, ws->c->dw[i].end);
    p->n = xpv_tool_ivals_normalize(p->v, p->n);
    w->host_len = 0;
    for (size_t i = 0; i < p->n; i++)
        w->host_len += p->v[i].end - p->v[i].start;
}

void xpv_findings_window_end(xpv_fscan *ws, xpv_fwindow *w)
{
    xpv_fctx *c = ws->c;
    ws->all.n = xpv_tool_ivals_normalize(ws->all.v, ws->all.n);
    ws->feed.n = xpv_tool_ivals_normalize(ws->feed.v, ws->feed.n);
    host_parts(ws, w);
    w->sync_ev.set = 0;
    for (size_t p = 0; p < ws->parts.n; p++) {
        int64_t p0 = ws->parts.v[p].start, p1 = ws->parts.v[p].end;
        if (c->ninput || ws->feed.n)
            w->input_wait += xpv_tool_wait_len(c->input, c->ninput, ws->all.v, ws->all.n,
                                               ws->feed.v, ws->feed.n, p0, p1);
        w->compile += xpv_tool_ivals_len_in(c->compile_ivals, c->ncompile_ivals, p0, p1);
        size_t lo = xpv_lower_bound_i64(c->sync_t, c->nsync, sizeof *c->sync_t, 0, p0);
        if (!w->sync_ev.set && lo < c->nsync && c->sync_t[lo] < p1) w->sync_ev = c->sync_ref[lo];
        for (size_t i = lo; i < c->nsync && c->sync_t[i] < p1; i++)
            w->sync_copies++;
    }
    if (c->has_steps && xpv_findings_graph_run(w)) host_wait(ws, w);
    ws->all.n = ws->feed.n = ws->gall.n = 0;
}
