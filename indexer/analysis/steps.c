/*
 * steps.c — which events are the steps.
 *
 * Step markers (kind STEP, positive duration) are kept as they stream in;
 * the source with the lowest enum xpv_step_source value present wins
 * (annotation, profiler_step, steps_line, nvtx, tf, training_step,
 * optimizer_step). Markers with the same
 * step number (several hosts or threads) merge into one step: the earliest
 * start, the latest end (the hull, which finds the step of an instant), the
 * name of the earliest marker. When every piece of a step is on a device
 * (per-device Steps lines, per-device module executions), each device also
 * keeps its own window (the hull of its pieces) unless all of them equal
 * the step's: step_breakdown.c measures each device in its own window and
 * the combined step is their mean, never the hull. Markers without a
 * number are numbered 0, 1, ... in start order per thread, so the n-th
 * marker of each thread merges with the n-th of the others. Markers on
 * device tracks (PyTorch's GPU-side copies of ProfilerStep#N, which last
 * until the GPU catches up) count only when no host track has markers of
 * that source: steps are the host's.
 *
 * `Optimizer.step#…` markers cover only the update at the end of each
 * iteration, so with them a step runs from the end of one optimizer step to
 * the end of the next on the same thread: n markers make n - 1 steps,
 * numbered 0, 1, ... and named after the marker that ends them.
 *
 * Without markers, steps are the executions of one XLA module ("module"):
 *   1. the most frequent XLA_MODULE event name; its events on each track, in
 *      start order, are executions 0, 1, ...;
 *   2. else the most frequent `hlo_module` arg of kernels; its device work
 *      (kernels, copies, memsets carrying it) joins the host run whose
 *      window holds its launch (module_runs.c): the n-th run of each host
 *      thread is execution n;
 *   3. where no launch falls in a run, per device, its device work (in
 *      start order) forms one execution until a gap (start after the latest
 *      end so far) longer than max(50 us, 10 x the median gap) opens the
 *      next: a guess that a while loop waiting on the host defeats.
 * The n-th execution of every track/device merges into step n, as markers
 * do (device windows included). Without either: source "none", no steps.
 */
#include "analysis_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_MARKERS (1u << 20)
#define MIN_EXECUTION_GAP_PS 50000000LL

static const char *const SOURCE_NAME[] = {
    [XPV_STEP_NONE] = "none",
    [XPV_STEP_ANNOTATION] = "annotation",
    [XPV_STEP_PROFILER_STEP] = "profiler_step",
    [XPV_STEP_STEPS_LINE] = "steps_line",
    [XPV_STEP_NVTX] = "nvtx",
    [XPV_STEP_TF] = "tf",
    [XPV_STEP_TRAINING_STEP] = "training_step",
    [XPV_STEP_OPTIMIZER] = "optimizer_step",
    [XPV_STEP_MODULE] = "module",
};

void xpv_markers_init(xpv_step_markers *s)
{
    memset(s, 0, sizeof *s);
}

void xpv_markers_free(xpv_step_markers *s)
{
    free(s->m);
    xpv_hindex_free(&s->module_counts);
}

void xpv_markers_add(xpv_step_markers *s, const xpv_event *ev)
{
    if (ev->dur_ps <= 0) return;
    if (ev->kind == XPV_KIND_XLA_MODULE) {
        ++*xpv_hindex_put(&s->module_counts, ev->name, 0);
        return;
    }
    if (ev->step_src < XPV_STEP_ANNOTATION || ev->step_src >= XPV_STEP_MODULE) return;
    if (s->n == MAX_MARKERS) {
        s->dropped++;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->m = xpv_xrealloc(s->m, s->cap * sizeof *s->m);
    }
    s->m[s->n++] = (xpv_marker){ev->step, ev->ts_ns, ev->dur_ps, ev->name, ev->track, ev->step_src};
}

/* ---- merging numbered pieces into steps ---- */

/* One execution or marker: `number` decides which step it merges into. */
typedef struct {
    int64_t number, start_ps, end_ps;
    uint32_t name, lane; /* lane: track or device, for numbering by order */
    int device;          /* the device it marks, -1 a host's */
} piece;

static int piece_by_lane(const void *pa, const void *pb)
{
    const piece *a = pa, *b = pb;
    if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
    return a->start_ps < b->start_ps ? -1 : a->start_ps > b->start_ps;
}

static int piece_by_number(const void *pa, const void *pb)
{
    const piece *a = pa, *b = pb;
    if (a->number != b->number) return a->number < b->number ? -1 : 1;
    return a->start_ps < b->start_ps ? -1 : a->start_ps > b->start_ps;
}

static int step_by_start(const void *pa, const void *pb)
{
    const xpv_step *a = pa, *b = pb;
    if (a->start_ps != b->start_ps) return a->start_ps < b->start_ps ? -1 : 1;
    return a->number < b->number ? -1 : a->number > b->number;
}

/* Numbers pieces with number < 0 by start order within their lane. */
static void number_by_order(piece *p, size_t n)
{
    xpv_sort(p, n, sizeof *p, piece_by_lane);
    int64_t rank = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && p[i].lane != p[i - 1].lane) rank = 0;
        if (p[i].number < 0) p[i].number = rank++;
    }
}

static int piece_by_device(const void *pa, const void *pb)
{
    const piece *a = pa, *b = pb;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    return a->start_ps < b->start_ps ? -1 : a->start_ps > b->start_ps;
}

/* The per-device windows of one step's pieces p[0, n), all on devices:
 * each device's hull, appended to out->win; kept only when some device's
 * window differs from the step's (else every device shares it). */
static void device_windows(piece *p, size_t n, xpv_step *st, xpv_step_list *out, size_t *cap)
{
    xpv_sort(p, n, sizeof *p, piece_by_device);
    size_t at = out->nwin, differ = 0;
    for (size_t i = 0; i < n; i++) {
        xpv_step_window *w = out->nwin > at ? &out->win[out->nwin - 1] : NULL;
        if (w && w->device == p[i].device) {
            if (p[i].end_ps > w->end_ps) w->end_ps = p[i].end_ps;
            continue;
        }
        if (w) differ |= w->start_ps != st->start_ps || w->end_ps != st->end_ps;
        out->win = xpv_grow_to_index(out->win, cap, out->nwin, sizeof *out->win, 0);
        out->win[out->nwin++] = (xpv_step_window){p[i].device, p[i].start_ps, p[i].end_ps};
    }
    const xpv_step_window *last = &out->win[out->nwin - 1];
    differ |= last->start_ps != st->start_ps || last->end_ps != st->end_ps;
    if (!differ) {
        out->nwin = at;
        return;
    }
    st->win_at = at;
    st->nwin = out->nwin - at;
}

/* Pieces with the same number are one step: the hull of their windows,
 * named after the earliest; pieces all on devices also give each device
 * its own window. */
static void merge_pieces(piece *p, size_t n, xpv_step_list *out)
{
    xpv_sort(p, n, sizeof *p, piece_by_number);
    out->v = xpv_xmalloc((n ? n : 1) * sizeof *out->v);
    out->n = 0;
    size_t wcap = 0;
    for (size_t i = 0, j; i < n; i = j) {
        xpv_step st = {p[i].number, p[i].name, p[i].start_ps, p[i].end_ps, 0, 0};
        int on_devices = 1;
        for (j = i; j < n && p[j].number == p[i].number; j++) {
            if (p[j].end_ps > st.end_ps) st.end_ps = p[j].end_ps;
            on_devices &= p[j].device >= 0;
        }
        if (on_devices) device_windows(&p[i], j - i, &st, out, &wcap);
        out->v[out->n++] = st;
    }
    xpv_sort(out->v, out->n, sizeof *out->v, step_by_start);
    if (out->n > XPV_MAX_STEPS) {
        out->dropped = (int64_t)(out->n - XPV_MAX_STEPS);
        out->n = XPV_MAX_STEPS;
    }
}

/* Unnumbered markers of one source that nest (Lightning's
 * [Strategy]...training_step around [LightningModule]...training_step, a
 * user's train_step inside either) are one step: per lane, a marker inside
 * the last one kept is dropped. Returns the markers kept, sorted by lane. */
static size_t drop_nested(piece *p, size_t n)
{
    xpv_sort(p, n, sizeof *p, piece_by_lane);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        const piece *last = out ? &p[out - 1] : NULL;
        if (last && last->lane == p[i].lane && p[i].start_ps >= last->start_ps &&
            p[i].end_ps <= last->end_ps)
            continue;
        p[out++] = p[i];
    }
    return out;
}

/* Optimizer markers -> the iterations between them: per lane, in start
 * order, piece k becomes (end of marker k, end of marker k + 1], number k. */
static size_t between_optimizer_steps(piece *p, size_t n)
{
    xpv_sort(p, n, sizeof *p, piece_by_lane);
    if (n == 0) return 0;
    size_t out = 0;
    int64_t number = 0, prev_end = p[0].end_ps;
    uint32_t lane = p[0].lane;
    for (size_t i = 1; i < n; i++) {
        piece cur = p[i]; /* p[out] may be p[i - 1]: read before writing */
        if (cur.lane != lane) {
            lane = cur.lane, prev_end = cur.end_ps, number = 0;
            continue;
        }
        cur.start_ps = prev_end;
        cur.number = number++;
        prev_end = p[i].end_ps;
        p[out++] = cur;
    }
    return out;
}

static int on_device(const xpv_analysis_input *in, uint32_t track)
{
    return track < in->ntracks && in->tracks[track].device_id >= 0;
}

static void from_markers(const xpv_step_markers *s, const xpv_analysis_input *in, int src,
                         int64_t base_ns, xpv_step_list *out)
{
    piece *p = xpv_xmalloc(s->n * sizeof *p);
    size_t n = 0, unnumbered = 0;
    int host_markers = 0;
    for (size_t i = 0; i < s->n; i++)
        host_markers |= s->m[i].src == src && !on_device(in, s->m[i].track);
    for (size_t i = 0; i < s->n; i++) {
        const xpv_marker *m = &s->m[i];
        if (m->src != src || (host_markers && on_device(in, m->track))) continue;
        int64_t start = xpv_ps_since(base_ns, m->ts_ns);
        int dev = on_device(in, m->track) ? in->tracks[m->track].device_id : -1;
        p[n++] = (piece){m->step, start, xpv_sat_add_i64(start, m->dur_ps), m->name, m->track, dev};
        unnumbered += m->step < 0;
    }
    if (src == XPV_STEP_OPTIMIZER) {
        n = between_optimizer_steps(p, n);
    } else if (unnumbered) {
        n = drop_nested(p, n);
        number_by_order(p, n);
    }
    merge_pieces(p, n, out);
    free(p);
}

/* ---- module fallback ---- */

typedef struct {
    const xpv_analysis_input *in;
    int64_t base_ns;
    uint32_t want;            /* module name id (XLA_MODULE) or hlo_module value id */
    int by_arg;               /* look at the hlo_module arg of kernels */
    xpv_hindex key_is_module; /* arg key id -> 1 for "hlo_module" */
    xpv_hindex counts;        /* hlo_module value id -> kernels */
    xpv_module_runs *runs;    /* the host's runs of `want`, NULL when unknown */
    piece *p;
    size_t n, cap;
} module_ctx;

static uint32_t hlo_module_of(module_ctx *c, const xpv_event *ev)
{
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        if (a->type != XPV_ARG_STR) continue;
        static const char *const module_key[] = {"hlo_module", NULL};
        if (xpv_analysis_string_is(c->in, &c->key_is_module, a->key, module_key)) return a->v.str;
    }
    return 0;
}

static void push_piece(module_ctx *c, const xpv_event *ev, uint32_t lane, int device)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->p = xpv_xrealloc(c->p, c->cap * sizeof *c->p);
    }
    int64_t start = xpv_ps_since(c->base_ns, ev->ts_ns);
    c->p[c->n++] = (piece){-1, start, xpv_sat_add_i64(start, ev->dur_ps), c->want, lane, device};
}

static int module_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    module_ctx *c = ctx;
    if (ev->dur_ps <= 0) return 0;
    if (!c->by_arg) {
        if (ev->kind == XPV_KIND_XLA_MODULE && ev->name == c->want)
            push_piece(c, ev, ev->track, c->in->tracks[ev->track].device_id);
        return 0;
    }
    if (ev->kind < XPV_KIND_KERNEL || ev->kind > XPV_KIND_MEMSET) return 0;
    uint32_t module = hlo_module_of(c, ev);
    if (!module) return 0;
    if (!c->want) {
        if (ev->kind != XPV_KIND_KERNEL) return 0;
        ++*xpv_hindex_put(&c->counts, module, 0);
    } else if (module == c->want) {
        int dev = c->in->tracks[ev->track].device_id;
        push_piece(c, ev, dev >= 0 ? (uint32_t)dev : 0xFFFFFFFFu, dev);
        if (c->runs) c->p[c->n - 1].number = xpv_module_runs_of(c->runs, ev->corr);
    }
    return 0;
}

static int scan_tracks(module_ctx *c, const uint8_t *tracks, xpv_err *err)
{
    for (size_t t = 0; t < c->in->ntracks; t++) {
        if (!tracks[t]) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, c->in->profile_id);
        q.track = (int64_t)t;
        /* hlo_module is an arg of device work; module events need only their names */
        q.kinds = c->by_arg ? XPV_KIND_DEVICE_WORK_BITS : XPV_KIND_BIT(XPV_KIND_XLA_MODULE);
        q.skip_args = !c->by_arg;
        if (xpv_analysis_scan(c->in, &q, module_visit, c, err) < 0) return -1;
    }
    return 0;
}

static uint32_t most_frequent(const xpv_hindex *m)
{
    uint64_t best_n = 0, best = 0, key, n;
    for (size_t pos = 0; xpv_hindex_next_entry(m, &pos, &key, &n);)
        if (n > best_n || (n == best_n && key < best)) best_n = n, best = key;
    return (uint32_t)best;
}

/* Turns the kernels of one module (sorted by lane, start) into executions. */
static size_t kernels_to_executions(piece *p, size_t n)
{
    int64_t *gaps = xpv_xmalloc((n ? n : 1) * sizeof *gaps), run_end = 0;
    size_t ngaps = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || p[i].lane != p[i - 1].lane) {
            run_end = p[i].end_ps;
            continue;
        }
        if (p[i].start_ps > run_end) gaps[ngaps++] = xpv_sat_sub_i64(p[i].start_ps, run_end);
        if (p[i].end_ps > run_end) run_end = p[i].end_ps;
    }
    xpv_sort_i64(gaps, ngaps);
    /* Saturating: a damaged file can put kernels anywhere in int64. */
    int64_t threshold = ngaps ? xpv_sat_mul_i64(gaps[ngaps / 2], 10) : 0;
    if (threshold < MIN_EXECUTION_GAP_PS) threshold = MIN_EXECUTION_GAP_PS;
    free(gaps);
    size_t out = 0;
    int64_t number = 0;
    for (size_t i = 0; i < n; i++) {
        int new_lane = i == 0 || p[i].lane != p[out - 1].lane;
        if (new_lane) number = 0;
        if (new_lane || p[i].start_ps > xpv_sat_add_i64(p[out - 1].end_ps, threshold)) {
            if (!new_lane) number++;
            p[out] = p[i];
            p[out++].number = number;
        } else if (p[i].end_ps > p[out - 1].end_ps) {
            p[out - 1].end_ps = p[i].end_ps;
        }
    }
    return out;
}

/* Device work numbered by the host run that launched it, that of no known
 * run left out. Returns what is kept: 0, for the gap rule to decide, when
 * some device's work has no run at all (its launches on a thread that
 * does not annotate runs), so that no device drops out of the steps. */
static size_t work_by_run(piece *p, size_t n)
{
    xpv_sort(p, n, sizeof *p, piece_by_lane);
    for (size_t i = 0, j; i < n; i = j) { /* each lane (device) needs a run */
        int any = 0;
        for (j = i; j < n && p[j].lane == p[i].lane; j++)
            any |= p[j].number >= 0;
        if (!any) return 0;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].number >= 0) p[kept++] = p[i];
    return kept;
}

static int from_modules(const xpv_step_markers *s, const xpv_analysis_input *in,
                        const xpv_step_tracks *tracks, int64_t base_ns, xpv_step_list *out,
                        xpv_err *err)
{
    module_ctx c = {.in = in, .base_ns = base_ns};
    int rc = 0;
    if (xpv_hindex_count(&s->module_counts)) {
        c.want = most_frequent(&s->module_counts);
        rc = scan_tracks(&c, tracks->module, err);
        if (rc == 0) number_by_order(c.p, c.n);
    } else {
        c.by_arg = 1;
        rc = scan_tracks(&c, tracks->device, err);
        if (rc == 0 && xpv_hindex_count(&c.counts)) {
            c.want = most_frequent(&c.counts);
            rc = xpv_module_runs_find(&c.runs, in, c.want, tracks->launch, base_ns, err);
            if (rc == 0) rc = scan_tracks(&c, tracks->device, err);
            size_t by_run = rc == 0 && c.runs ? work_by_run(c.p, c.n) : 0;
            if (by_run) {
                c.n = by_run;
            } else {
                for (size_t i = 0; i < c.n; i++) /* gaps decide, as with no runs */
                    c.p[i].number = -1;
                xpv_sort(c.p, c.n, sizeof *c.p, piece_by_lane);
                c.n = kernels_to_executions(c.p, c.n);
            }
        }
    }
    if (rc == 0 && c.n) {
        merge_pieces(c.p, c.n, out);
        out->source = SOURCE_NAME[XPV_STEP_MODULE];
    }
    free(c.p);
    xpv_module_runs_free(c.runs);
    xpv_hindex_free(&c.key_is_module);
    xpv_hindex_free(&c.counts);
    return rc;
}

int xpv_steps_build(xpv_step_markers *s, const xpv_analysis_input *in,
                    const xpv_step_tracks *tracks, int64_t base_ns, xpv_step_list *out,
                    xpv_err *err)
{
    memset(out, 0, sizeof *out);
    out->base_ns = base_ns;
    out->source = SOURCE_NAME[XPV_STEP_NONE];
    /* The most preferred source that makes steps (a lone optimizer marker
     * makes none, and then the next source is tried). */
    unsigned present = 0;
    for (size_t i = 0; i < s->n; i++)
        present |= 1u << s->m[i].src;
    for (int src = XPV_STEP_ANNOTATION; src < XPV_STEP_MODULE; src++) {
        if (!(present & (1u << src))) continue;
        from_markers(s, in, src, base_ns, out);
        if (out->n) {
            out->source = SOURCE_NAME[src];
            return 0;
        }
        xpv_step_list_free(out);
    }
    return from_modules(s, in, tracks, base_ns, out, err);
}

size_t xpv_steps_started_by(const xpv_step_list *s, int64_t t, size_t *hint)
{
    if (hint && *hint <= s->n) { /* the previous answer, or the one after it */
        size_t h = *hint;
        if (h == 0 || s->v[h - 1].start_ps <= t) {
            if (h == s->n || s->v[h].start_ps > t) return h;
            if (h + 1 == s->n || s->v[h + 1].start_ps > t) return *hint = h + 1;
        }
    }
    size_t lo = xpv_upper_bound_i64(s->v, s->n, sizeof *s->v, offsetof(xpv_step, start_ps), t);
    if (hint) *hint = lo;
    return lo;
}

long xpv_step_at(const xpv_step_list *s, int64_t t, size_t *hint)
{
    size_t lo = xpv_steps_started_by(s, t, hint);
    /* lo = steps starting at or before t; overlapping steps: look back a little. */
    for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++)
        if (t < s->v[i - 1].end_ps) return (long)(i - 1);
    return -1;
}

void xpv_step_list_free(xpv_step_list *l)
{
    free(l->v);
    free(l->win);
    l->v = NULL;
    l->win = NULL;
    l->n = l->nwin = 0;
}
