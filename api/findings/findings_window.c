/*
 * findings_window.c — one step window's device work, measured: per device
 * the union of its compute, collectives and all its work (so overlapping
 * streams count once), the collective time no compute overlaps, copies,
 * kernel counts and the idle gaps between them, launch latencies by
 * correlation id, and the time the devices wait for the host's input work.
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

static void latency(xpv_fscan *ws, const xpv_fitem *it)
{
    xpv_fctx *c = ws->c;
    if (it->corr < 0 || !ws->nl) return;
    xpv_flaunch key = {it->corr, 0};
    const xpv_flaunch *l = xpv_sorted_find(&key, ws->l, ws->nl, sizeof *ws->l, launch_cmp);
    if (!l || it->s < l->t) return;
    c->latency_seen++;
    if (c->nlatency >= MAX_LATENCY) return;
    if (c->nlatency == c->latency_cap) {
        c->latency_cap = c->latency_cap ? c->latency_cap * 2 : 1024;
        c->latency = xpv_xrealloc(c->latency, c->latency_cap * sizeof *c->latency);
    }
    c->latency[c->nlatency++] = it->s - l->t;
}

/* Counts and evidence of an event starting in the window. */
static void count_item(xpv_fscan *ws, xpv_fwindow *w, const xpv_fitem *it)
{
    xpv_fctx *c = ws->c;
    int64_t d = it->e - it->s;
    if (it->kind == XPV_KIND_KERNEL) {
        w->kernels++;
        w->kernel_time += d;
        if ((double)d < c->cfg->launch_short_kernel_us * 1e6) w->short_kernels++;
    }
    if (it->kind == XPV_KIND_MEMCPY_H2D) w->h2d += d;
    if (it->kind == XPV_KIND_MEMCPY_D2H) w->d2h += d;
    if (it->kind == XPV_KIND_MEMCPY_H2D || it->kind == XPV_KIND_MEMCPY_D2H)
        xpv_fref_longest(&w->copy_ev, it->s, it->e, it->block, it->index);
    for (int i = 0; i < c->nhot; i++)
        if (it->name == c->hot_name[i])
            xpv_fref_longest(&c->hot_ev[i], it->s, it->e, it->block, it->index);
    latency(ws, it);
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
    w->idle_in_active += first - last;
    w->gaps++;
}

void xpv_findings_window_device(xpv_fscan *ws, xpv_fwindow *w, const xpv_fitem *v, size_t n)
{
    int64_t w0 = w->start, w1 = w->end;
    int any = 0;
    ws->comp.n = ws->coll.n = ws->busy.n = 0;
    for (size_t i = 0; i < n; i++) {
        const xpv_fitem *it = &v[i];
        assert(it->s < w1);
        int64_t s = it->s < w0 ? w0 : it->s, e = it->e > w1 ? w1 : it->e;
        if (it->s >= w0) count_item(ws, w, it), any = 1;
        if (e <= s) continue;
        any = 1;
        push(&ws->busy, s, e);
        if (ws->c->ninput) push(&ws->all, s, e);
        if (it->cls & XPV_FN_FEED) push(&ws->feed, s, e);
        if (it->kind != XPV_KIND_KERNEL && it->kind != XPV_KIND_XLA_OP) continue;
        if (it->cls & XPV_FN_COLLECTIVE) {
            push(&ws->coll, s, e);
            xpv_fref_longest(&w->exposed_ev, it->s, it->e, it->block, it->index);
        } else {
            push(&ws->comp, s, e);
        }
    }
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
        note_gap(w, &ws->busy);
    }
}

void xpv_findings_window_end(xpv_fscan *ws, xpv_fwindow *w)
{
    const xpv_fctx *c = ws->c;
    ws->all.n = xpv_tool_ivals_normalize(ws->all.v, ws->all.n);
    ws->feed.n = xpv_tool_ivals_normalize(ws->feed.v, ws->feed.n);
    if (c->ninput || ws->feed.n)
        w->input_wait = xpv_tool_wait_len(c->input, c->ninput, ws->all.v, ws->all.n, ws->feed.v,
                                          ws->feed.n, w->start, w->end);
    w->compile = xpv_tool_ivals_len_in(c->compile_ivals, c->ncompile_ivals, w->start, w->end);
    size_t lo = xpv_lower_bound_i64(c->sync_t, c->nsync, sizeof *c->sync_t, 0, w->start);
    if (lo < c->nsync && c->sync_t[lo] < w->end) w->sync_ev = c->sync_ref[lo];
    for (size_t i = lo; i < c->nsync && c->sync_t[i] < w->end; i++)
        w->sync_copies++;
    ws->all.n = ws->feed.n = 0;
}
