/*
 * findings_window.c — one step window's device work, measured: per device
 * the union of its compute, collectives and all its work (so overlapping
 * streams count once), the collective time no compute overlaps, copies and
 * their bytes, kernel counts and the idle gaps between them, launch
 * latencies by correlation id, and the time the devices wait for the host's
 * input work.
 *
 * An event belongs to the window it overlaps for unions (clipped to the
 * window) and to the window it starts in for counts, so a step's numbers
 * never include another step's time and every event is counted once.
 *
 * Memory: one window's device events at a time (at most MAX_WINDOW_ITEMS;
 * beyond, the answer says it is truncated) and at most MAX_LATENCY launch
 * latencies. A profile without steps is cut into slices (findings.c) so
 * that no window holds the whole profile.
 */
#define _GNU_SOURCE
#include "findings_internal.h"
#include "../indexer/event_store.h"

#include <stdlib.h>
#include <string.h>

#define MAX_WINDOW_ITEMS (1u << 20)
#define MAX_LATENCY (1u << 21)

typedef struct {
    int32_t dev;
    uint8_t cls, kind;
    uint32_t name, index;
    int64_t s, e, corr, block;
} item;

typedef struct {
    int64_t corr, t;
} launch;

typedef struct {
    xpv_tool_ival *v;
    size_t n, cap;
} ivals;

typedef struct {
    xpv_fctx *c;
    xpv_fwindow *w;
    item *items;
    size_t n, cap;
    launch *l;
    size_t nl, lcap;
    ivals comp, coll, busy, all, feed;
} wscan;

static void push(ivals *l, int64_t s, int64_t e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = xpv_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (xpv_tool_ival){s, e};
}

static int is_copy(int kind)
{
    return kind >= XPV_KIND_MEMCPY_H2D && kind <= XPV_KIND_MEMCPY_OTHER;
}

static int device_work(const xpv_fctx *c, int kind)
{
    return kind == XPV_KIND_KERNEL || is_copy(kind) || kind == XPV_KIND_MEMSET ||
           (c->prof.no_kernels && kind == XPV_KIND_XLA_OP);
}

static int win_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    wscan *ws = ctx;
    xpv_fctx *c = ws->c;
    if (ev->dur_ps < 0) return 0;
    int dev = ev->track < c->ntracks ? c->track_device[ev->track] : -1;
    int64_t s = (ev->ts_ns - c->prof.base_ns) * 1000, e = s + ev->dur_ps;
    if (ev->kind == XPV_KIND_LAUNCH) {
        if (dev >= 0 || ev->corr < 0 || s < ws->w->start || s >= ws->w->end) return 0;
        if (ws->nl == ws->lcap) {
            ws->lcap = ws->lcap ? ws->lcap * 2 : 256;
            ws->l = xpv_xrealloc(ws->l, ws->lcap * sizeof *ws->l);
        }
        ws->l[ws->nl++] = (launch){ev->corr, s};
        return 0;
    }
    if (dev < 0 || !device_work(c, ev->kind) || s >= ws->w->end) return 0;
    if (e <= ws->w->start && s < ws->w->start) return 0;
    if (ws->n >= MAX_WINDOW_ITEMS) {
        c->truncated = 1;
        return 0;
    }
    if (ws->n == ws->cap) {
        ws->cap = ws->cap ? ws->cap * 2 : 1024;
        ws->items = xpv_xrealloc(ws->items, ws->cap * sizeof *ws->items);
    }
    uint8_t k = ev->name < c->ncls ? c->cls[ev->name] : 0;
    ws->items[ws->n++] = (item){dev, k, ev->kind, ev->name, index, s, e, ev->corr, block};
    return 0;
}

static int item_cmp(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

static int launch_cmp(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int64_t ivals_len(const ivals *l)
{
    int64_t t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += l->v[i].end - l->v[i].start;
    return t;
}

static void latency(wscan *ws, const item *it)
{
    xpv_fctx *c = ws->c;
    if (it->corr < 0 || !ws->nl) return;
    launch key = {it->corr, 0};
    const launch *l = bsearch(&key, ws->l, ws->nl, sizeof *ws->l, launch_cmp);
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
static void count_item(wscan *ws, const item *it)
{
    xpv_fctx *c = ws->c;
    xpv_fwindow *w = ws->w;
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
static void note_gap(xpv_fwindow *w, const ivals *busy)
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
static void between_slices(xpv_fctx *c, xpv_fwindow *w, int dev, const ivals *busy)
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

static void one_device(wscan *ws, const item *v, size_t n)
{
    xpv_fwindow *w = ws->w;
    int64_t w0 = w->start, w1 = w->end;
    ws->comp.n = ws->coll.n = ws->busy.n = 0;
    for (size_t i = 0; i < n; i++) {
        const item *it = &v[i];
        int64_t s = it->s < w0 ? w0 : it->s, e = it->e > w1 ? w1 : it->e;
        if (it->s >= w0) count_item(ws, it);
        if (e <= s) continue;
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

/* Bytes of the copies starting in the window: a second pass, with args. */
typedef struct {
    xpv_fctx *c;
    xpv_fwindow *w;
} bytes_scan;

static int64_t copy_bytes(const xpv_fctx *c, const xpv_event *ev)
{
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        if (!a->key) continue;
        int bytes_key =
            a->key == c->key_bytes[0] || a->key == c->key_bytes[1] || a->key == c->key_bytes[2];
        if (bytes_key && a->type == XPV_ARG_INT && a->v.i >= 0) return a->v.i;
        if (bytes_key && a->type == XPV_ARG_UINT && a->v.u <= INT64_MAX) return (int64_t)a->v.u;
        if (a->key == c->key_memcpy_details && a->type == XPV_ARG_TEXT) {
            const char *p = memmem(a->text, a->len, "num_bytes:", 10);
            if (p) return strtoll(p + 10, NULL, 10);
        }
    }
    return -1;
}

static int bytes_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    bytes_scan *b = ctx;
    int64_t s = (ev->ts_ns - b->c->prof.base_ns) * 1000;
    if (ev->dur_ps < 0 || s < b->w->start || s >= b->w->end) return 0;
    if (ev->track >= b->c->ntracks || b->c->track_device[ev->track] < 0) return 0;
    int64_t n = copy_bytes(b->c, ev);
    if (n < 0) return 0;
    b->w->has_bytes = 1;
    if (ev->kind == XPV_KIND_MEMCPY_H2D) b->w->h2d_bytes += n;
    if (ev->kind == XPV_KIND_MEMCPY_D2H) b->w->d2h_bytes += n;
    return 0;
}

static void host_side(const xpv_fctx *c, wscan *ws)
{
    xpv_fwindow *w = ws->w;
    ws->all.n = xpv_tool_ivals_normalize(ws->all.v, ws->all.n);
    ws->feed.n = xpv_tool_ivals_normalize(ws->feed.v, ws->feed.n);
    if (c->ninput || ws->feed.n)
        w->input_wait = xpv_tool_wait_len(c->input, c->ninput, ws->all.v, ws->all.n, ws->feed.v,
                                          ws->feed.n, w->start, w->end);
    w->compile = xpv_tool_ivals_len_in(c->compile_ivals, c->ncompile_ivals, w->start, w->end);
    size_t lo = 0, hi = c->nsync;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->sync_t[mid] < w->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->nsync && c->sync_t[lo] < w->end) w->sync_ev = c->sync_ref[lo];
    for (size_t i = lo; i < c->nsync && c->sync_t[i] < w->end; i++)
        w->sync_copies++;
}

static int scan_window(xpv_fctx *c, wscan *ws, xpv_fwindow *w, xpv_err *err)
{
    ws->w = w;
    ws->n = ws->nl = ws->all.n = ws->feed.n = 0;
    xpv_store_query q;
    xpv_store_query_all(&q, c->id);
    q.t0 = c->prof.base_ns + w->start / 1000;
    q.t1 = c->prof.base_ns + (w->end + 999) / 1000;
    q.skip_args = 1;
    q.kinds = XPV_KIND_BIT(XPV_KIND_KERNEL) | XPV_KIND_BIT(XPV_KIND_MEMCPY_H2D) |
              XPV_KIND_BIT(XPV_KIND_MEMCPY_D2H) | XPV_KIND_BIT(XPV_KIND_MEMCPY_D2D) |
              XPV_KIND_BIT(XPV_KIND_MEMCPY_OTHER) | XPV_KIND_BIT(XPV_KIND_MEMSET) |
              XPV_KIND_BIT(XPV_KIND_LAUNCH) |
              (c->prof.no_kernels ? XPV_KIND_BIT(XPV_KIND_XLA_OP) : 0);
    if (xpv_store_scan(c->db, &q, win_visit, ws, err) != 0) return -1;
    qsort(ws->items, ws->n, sizeof *ws->items, item_cmp);
    qsort(ws->l, ws->nl, sizeof *ws->l, launch_cmp);
    for (size_t i = 0, j; i < ws->n; i = j) {
        for (j = i + 1; j < ws->n && ws->items[j].dev == ws->items[i].dev; j++)
            ;
        one_device(ws, ws->items + i, j - i);
    }
    host_side(c, ws);
    q.kinds = XPV_KIND_BIT(XPV_KIND_MEMCPY_H2D) | XPV_KIND_BIT(XPV_KIND_MEMCPY_D2H);
    q.skip_args = 0;
    bytes_scan b = {c, w};
    return xpv_store_scan(c->db, &q, bytes_visit, &b, err) < 0 ? -1 : 0;
}

int xpv_findings_scan_windows(xpv_fctx *c, xpv_err *err)
{
    wscan ws = {.c = c};
    int rc = 0;
    for (size_t i = 0; i < c->nwin && rc == 0; i++)
        rc = scan_window(c, &ws, &c->win[i], err);
    free(ws.items);
    free(ws.l);
    free(ws.comp.v), free(ws.coll.v), free(ws.busy.v), free(ws.all.v), free(ws.feed.v);
    return rc;
}
