/*
 * findings_batch.c — reads the step windows' device work from the event
 * store and hands it to findings_window.c, device by device.
 *
 * Windows are read in batches: consecutive windows whose span together is
 * no longer than an event block's typical span are read with one scan, so
 * a profile of many short steps does not decode every block once per step
 * it overlaps; a long step is read alone. A batch's events are grouped by
 * device (a counting sort, stable) and sorted by start, so that each window
 * finds its events by binary search.
 *
 * A window's answer must not depend on the batch it was read in: each
 * window pairs its kernels only with the launches inside it, as it would
 * read alone, and sees its events in one order, by start then block and
 * index, not in the order the blocks were read (the evidence keeps the
 * first of equally long events).
 *
 * A step the devices ran at different times is read over its span (to
 * span_end, the latest device's end) and each device measured in its own
 * window, so a later device's work counts in its step.
 *
 * Memory: one batch's device events (at most MAX_BATCH_ITEMS; beyond, the
 * answer says it is truncated) and its launches. A profile without steps
 * is cut into slices (findings.c) so that no batch holds the whole of it.
 */
#define _GNU_SOURCE
#include "findings_internal.h"
#include "../../common/xpv_hindex.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/event_store.h"
#include "../../store/steps.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BATCH_ITEMS (1u << 20)
#define MAX_BATCH_WINDOWS 4096
#define MAX_COUNTED_DEVICES 65536

static int is_copy(int kind)
{
    return kind >= XPV_KIND_MEMCPY_H2D && kind <= XPV_KIND_MEMCPY_OTHER;
}

static int device_work(const xpv_fctx *c, int kind)
{
    return kind == XPV_KIND_KERNEL || is_copy(kind) || kind == XPV_KIND_MEMSET ||
           (c->prof.no_kernels && kind == XPV_KIND_XLA_OP);
}

static void add_launch(xpv_fscan *ws, int64_t corr, int64_t s, int graph)
{
    if (ws->nl == ws->lcap) {
        ws->lcap = ws->lcap ? ws->lcap * 2 : 256;
        ws->l = xpv_xrealloc(ws->l, ws->lcap * sizeof *ws->l);
    }
    ws->l[ws->nl++] = (xpv_flaunch){corr, s, graph};
}

static int batch_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    xpv_fscan *ws = ctx;
    xpv_fctx *c = ws->c;
    if (ev->dur_ps < 0) return 0;
    int dev = ev->track < c->ntracks ? c->track_device[ev->track] : -1;
    int64_t s = (ev->ts_ns - c->prof.base_ns) * 1000, e = s + ev->dur_ps;
    uint8_t k = ev->name < c->ncls ? c->cls[ev->name] : 0;
    if (ev->kind == XPV_KIND_LAUNCH) {
        if (dev < 0 && ev->corr >= 0 && s >= ws->b0 && s < ws->b1)
            add_launch(ws, ev->corr, s, (k & XPV_FN_GRAPH_LAUNCH) != 0);
        return 0;
    }
    if (dev < 0 || !device_work(c, ev->kind) || s >= ws->b1) return 0;
    if (e <= ws->b0 && s < ws->b0) return 0;
    if (ws->n >= MAX_BATCH_ITEMS) {
        c->truncated = 1;
        return 0;
    }
    if (ws->n == ws->cap) {
        ws->cap = ws->cap ? ws->cap * 2 : 1024;
        ws->items = xpv_xrealloc(ws->items, ws->cap * sizeof *ws->items);
    }
    ws->items[ws->n++] = (xpv_fitem){dev, k, ev->kind, ev->name, index, s, e, ev->corr, block};
    return 0;
}

static int by_device(const void *a, const void *b)
{
    const xpv_fitem *x = a, *y = b;
    return x->dev != y->dev ? (x->dev < y->dev ? -1 : 1) : 0;
}

static int by_start(const void *a, const void *b)
{
    const xpv_fitem *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_time(const void *a, const void *b)
{
    const xpv_flaunch *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Ties by time, so that a repeated correlation id finds the same launch
 * in a window whatever else the batch holds. */
static int by_corr(const void *a, const void *b)
{
    const xpv_flaunch *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* ws->by_dev = ws->items grouped by device, in scan order within each. */
static void group_by_device(xpv_fscan *ws)
{
    int32_t max = -1;
    for (size_t i = 0; i < ws->n; i++)
        if (ws->items[i].dev > max) max = ws->items[i].dev;
    if (ws->n > ws->by_dev_cap) {
        ws->by_dev_cap = ws->n;
        ws->by_dev = xpv_xrealloc(ws->by_dev, ws->by_dev_cap * sizeof *ws->by_dev);
    }
    if (max >= MAX_COUNTED_DEVICES) {
        memcpy(ws->by_dev, ws->items, ws->n * sizeof *ws->items);
        xpv_sort(ws->by_dev, ws->n, sizeof *ws->by_dev, by_device);
        return;
    }
    size_t *at = calloc((size_t)max + 2, sizeof *at);
    for (size_t i = 0; i < ws->n; i++)
        at[ws->items[i].dev + 1]++;
    for (int32_t d = 0; d <= max; d++)
        at[d + 1] += at[d];
    for (size_t i = 0; i < ws->n; i++)
        ws->by_dev[at[ws->items[i].dev]++] = ws->items[i];
    free(at);
}

/* The first of v[0..n) (sorted by start) starting at or after t. */
static size_t first_from(const xpv_fitem *v, size_t n, int64_t t)
{
    return xpv_lower_bound_i64(v, n, sizeof *v, offsetof(xpv_fitem, s), t);
}

/* The device groups of ws->by_dev and each one's longest event. */
static void find_groups(xpv_fscan *ws)
{
    ws->ngrp = 0;
    for (size_t i = 0;;) {
        if (ws->ngrp + 2 > ws->grp_cap) {
            ws->grp_cap = ws->grp_cap ? ws->grp_cap * 2 : 64;
            ws->grp = xpv_xrealloc(ws->grp, ws->grp_cap * sizeof *ws->grp);
            ws->grp_long = xpv_xrealloc(ws->grp_long, ws->grp_cap * sizeof *ws->grp_long);
        }
        ws->grp[ws->ngrp] = i;
        if (i >= ws->n) return;
        int64_t longest = 0;
        size_t j = i;
        for (; j < ws->n && ws->by_dev[j].dev == ws->by_dev[i].dev; j++)
            if (ws->by_dev[j].e - ws->by_dev[j].s > longest)
                longest = ws->by_dev[j].e - ws->by_dev[j].s;
        ws->grp_long[ws->ngrp++] = longest;
        i = j;
    }
}

/* The first of l[0..n) (sorted by time) launched at or after t. */
static size_t first_launch(const xpv_flaunch *l, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].t < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Device dev's part of window w into [*w0, *w1): its own window when the
 * devices ran the step apart (0 when it has none), else w's. */
static int device_part(const xpv_fctx *c, const xpv_fwindow *w, int dev, int64_t *w0, int64_t *w1)
{
    *w0 = w->start, *w1 = w->end;
    if (!w->ndw) return 1;
    for (size_t i = w->dw_at; i < w->dw_at + w->ndw; i++)
        if (c->dw[i].dev == dev) {
            *w0 = c->dw[i].start, *w1 = c->dw[i].end;
            return 1;
        }
    return 0;
}

/* Hands window w each device's events of the batch that may overlap it,
 * with the launches in l[0..nl) (w's own, sorted by correlation id). */
static void measure(xpv_fscan *ws, xpv_fwindow *w, int several, xpv_flaunch *l, size_t nl)
{
    xpv_flaunch *batch_l = ws->l;
    size_t batch_nl = ws->nl;
    ws->l = l, ws->nl = nl;
    for (size_t g = 0; g < ws->ngrp; g++) {
        const xpv_fitem *v = ws->by_dev + ws->grp[g];
        size_t n = ws->grp[g + 1] - ws->grp[g], lo = 0, hi = n;
        int64_t w0, w1;
        if (!n || !device_part(ws->c, w, v[0].dev, &w0, &w1)) continue;
        if (several || w->ndw) {
            lo = first_from(v, n, w0 - ws->grp_long[g]);
            hi = first_from(v, n, w1);
        }
        if (lo < hi) xpv_findings_window_device(ws, w, w0, w1, v + lo, hi - lo);
    }
    xpv_findings_window_end(ws, w);
    ws->l = batch_l, ws->nl = batch_nl;
}

/* ---- bytes of the copies: a second pass, with args ---- */

typedef struct {
    xpv_fctx *c;
    xpv_fwindow *w;
    size_t nw;
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
    if (ev->dur_ps < 0 || ev->track >= b->c->ntracks || b->c->track_device[ev->track] < 0) return 0;
    /* the last window starting at or before s; of a step the devices ran
     * apart, the one whose window of this device holds s (the spans of
     * neighbouring steps overlap: the last to start is often another step) */
    int dev = b->c->track_device[ev->track];
    size_t lo = xpv_upper_bound_i64(b->w, b->nw, sizeof *b->w, offsetof(xpv_fwindow, start), s);
    xpv_fwindow *w = NULL;
    for (size_t i = lo; i-- > 0 && !w;) {
        int64_t w0, w1;
        if (!b->w[i].ndw) {
            if (s < b->w[i].span_end) w = &b->w[i];
            break;
        }
        if (device_part(b->c, &b->w[i], dev, &w0, &w1) && s >= w0 && s < w1) w = &b->w[i];
    }
    if (!w) return 0;
    int64_t n = copy_bytes(b->c, ev);
    if (n < 0) return 0;
    w->has_bytes = 1;
    if (ev->kind == XPV_KIND_MEMCPY_H2D) w->h2d_bytes += n;
    if (ev->kind == XPV_KIND_MEMCPY_D2H) w->d2h_bytes += n;
    return 0;
}

/* ---- batches ---- */

static int read_batch(xpv_fctx *c, xpv_fscan *ws, xpv_fwindow *w, size_t nw, xpv_err *err)
{
    ws->b0 = w[0].start, ws->b1 = w[0].span_end;
    for (size_t i = 1; i < nw; i++)
        if (w[i].span_end > ws->b1) ws->b1 = w[i].span_end;
    ws->n = ws->nl = 0;
    xpv_store_query q;
    xpv_store_query_all(&q, c->id);
    q.t0 = c->prof.base_ns + ws->b0 / 1000;
    q.t1 = c->prof.base_ns + (ws->b1 + 999) / 1000;
    q.skip_args = 1;
    q.kinds = XPV_KIND_DEVICE_WORK_BITS | XPV_KIND_BIT(XPV_KIND_LAUNCH) |
              (c->prof.no_kernels ? XPV_KIND_BIT(XPV_KIND_XLA_OP) : 0);
    if (xpv_store_scan(c->db, &q, batch_visit, ws, err) != 0) return -1;
    group_by_device(ws);
    find_groups(ws);
    for (size_t g = 0; g < ws->ngrp; g++)
        xpv_sort(ws->by_dev + ws->grp[g], ws->grp[g + 1] - ws->grp[g], sizeof *ws->by_dev,
                 by_start);
    /* the windows are disjoint and sorted: each one's run of launches is
     * found past the runs before it, which are re-sorted by correlation id */
    xpv_sort(ws->l, ws->nl, sizeof *ws->l, by_time);
    for (size_t i = 0, done = 0; i < nw; i++) {
        size_t a = done + first_launch(ws->l + done, ws->nl - done, w[i].start);
        size_t b = a + first_launch(ws->l + a, ws->nl - a, w[i].span_end);
        xpv_sort(ws->l + a, b - a, sizeof *ws->l, by_corr);
        measure(ws, &w[i], nw > 1, ws->l + a, b - a);
        done = b;
    }
    q.kinds = XPV_KIND_BIT(XPV_KIND_MEMCPY_H2D) | XPV_KIND_BIT(XPV_KIND_MEMCPY_D2H);
    q.skip_args = 0;
    bytes_scan b = {c, w, nw};
    return xpv_store_scan(c->db, &q, bytes_visit, &b, err) < 0 ? -1 : 0;
}

/* The typical time span of a block of device work, ps (0: none). */
static int64_t block_span(xpv_fctx *c)
{
    sqlite3_stmt *st;
    int64_t span = 0;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT AVG(t_max - t_min) FROM blocks WHERE profile_id=?1 AND"
                           " (kinds & ?2) != 0",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, c->id);
    sqlite3_bind_int64(st, 2,
                       XPV_KIND_BIT(XPV_KIND_KERNEL) | XPV_KIND_BIT(XPV_KIND_XLA_OP) |
                           XPV_KIND_BIT(XPV_KIND_LAUNCH));
    if (sqlite3_step(st) == SQLITE_ROW) span = (int64_t)(sqlite3_column_double(st, 0) * 1000);
    sqlite3_finalize(st);
    return span;
}

int xpv_findings_scan_windows(xpv_fctx *c, xpv_err *err)
{
    xpv_fscan ws = {.c = c};
    /* XPV_FINDINGS_BATCH=off reads each window alone: the tests compare
     * both ways, the benchmark times them */
    const char *batch = getenv("XPV_FINDINGS_BATCH");
    int64_t span = batch && strcmp(batch, "off") == 0 ? 0 : block_span(c);
    int rc = 0;
    for (size_t i = 0, j; i < c->nwin && rc == 0; i = j) {
        for (j = i + 1; j < c->nwin && j - i < MAX_BATCH_WINDOWS &&
                        c->win[j].span_end - c->win[i].start <= span &&
                        c->win[j].start >= c->win[j - 1].span_end;
             j++)
            ;
        rc = read_batch(c, &ws, &c->win[i], j - i, err);
    }
    free(ws.items), free(ws.by_dev), free(ws.l), free(ws.grp), free(ws.grp_long);
    free(ws.comp.v), free(ws.coll.v), free(ws.busy.v), free(ws.all.v), free(ws.feed.v);
    free(ws.graph.v), free(ws.gall.v), free(ws.parts.v), free(ws.cg);
    return rc;
}

/* ---- steps the devices ran at different times ---- */

static int dw_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* window, device, start, end */
    for (int i = 0; i < 2; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* One device's rows, as (window, device, start, end) of the windows that
 * have device windows (at: step -> window index + 1). */
static int device_rows(xpv_fctx *c, xpv_hindex *at, int dev, int64_t **v, size_t *n, size_t *cap,
                       xpv_err *err)
{
    xpv_store_cursor cur;
    xpv_store_step r;
    int rc;
    if (xpv_store_steps_open(&cur, c->db, c->id, dev, err) != 0) return -1;
    while ((rc = xpv_store_steps_next(&cur, &r, err)) == 1) {
        uint64_t *w = xpv_hindex_get(at, (uint64_t)r.step);
        if (!w || !xpv_store_step_known(&r, XPV_STORE_STEP_START)) continue;
        *v = xpv_grow_to_index(*v, cap, 4 * *n + 3, sizeof **v, 0);
        int64_t s = r.ps[XPV_STORE_STEP_START], *row = *v + 4 * (*n)++;
        row[0] = (int64_t)*w, row[1] = dev, row[2] = s, row[3] = s + r.ps[XPV_STORE_STEP_DURATION];
    }
    xpv_store_cursor_close(&cur);
    return rc;
}

int xpv_findings_load_device_windows(xpv_fctx *c, xpv_err *err)
{
    xpv_hindex at = {0};
    size_t apart = 0;
    for (size_t i = 0; i < c->nwin; i++)
        if (c->win[i].span_end > c->win[i].end)
            *xpv_hindex_put(&at, (uint64_t)c->win[i].step, i) = i, apart++;
    int *devs = NULL, rc = 0;
    size_t ndev = 0, n = 0, cap = 0;
    int64_t *v = NULL;
    if (apart && (rc = xpv_store_steps_devices(c->db, c->id, &devs, &ndev, err)) == 0)
        for (size_t d = 0; d < ndev && rc == 0; d++)
            rc = device_rows(c, &at, devs[d], &v, &n, &cap, err);
    xpv_sort(v, n, 4 * sizeof *v, dw_cmp);
    c->dw = xpv_xmalloc((n ? n : 1) * sizeof *c->dw);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        xpv_fwindow *w = &c->win[v[4 * i]];
        if (!w->ndw) w->dw_at = i;
        w->ndw++;
        c->dw[c->ndw++] = (xpv_fdevwin){(int)v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]};
    }
    xpv_hindex_free(&at);
    free(devs), free(v);
    return rc;
}
