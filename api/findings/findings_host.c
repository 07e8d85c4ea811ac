/*
 * findings_host.c — when CUDA graphs run the kernels (XLA command buffers,
 * PyTorch graph replays), the device waits for the host between graph
 * launches, not for launches: the time of a step in which no device works
 * and no graph runs (findings_window.c's host gaps) is blamed on the host
 * work that overlaps it, by name ("data_loading 3.2 ms, log_metrics
 * 1.1 ms"), and judged as a share of step time.
 *
 * What is blamed: on each host thread, the outermost event over a gap that
 * is neither a step marker nor a Python tracer frame ("$file.py:12 fn",
 * "file.py(12): fn") nor spans a whole step (an outer loop), so that a
 * TraceAnnotation or PyTorch op names the work rather than its frames or
 * its inner calls. Steps where graphs ran at most half the kernels are
 * left to the launch-bound check. Threads are blamed each for itself: two threads busy in
 * one gap both show it, so the names' times may add up to more than it.
 *
 * Memory: the host gaps (at most MAX_GAPS; with graphs a step holds a few)
 * and the events that overlap them (at most MAX_BLAMED).
 */
#define _GNU_SOURCE
#include "findings_internal.h"
#include "../api_util.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/event_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GAPS (1u << 20)
#define MAX_BLAMED (1u << 21)
#define NAMES_SHOWN 5

void xpv_findings_host_gap(xpv_fctx *c, int64_t start, int64_t end)
{
    if (c->nhost_gaps >= MAX_GAPS) return;
    if (c->nhost_gaps == c->host_gaps_cap) {
        c->host_gaps_cap = c->host_gaps_cap ? c->host_gaps_cap * 2 : 64;
        c->host_gaps = xpv_xrealloc(c->host_gaps, c->host_gaps_cap * sizeof *c->host_gaps);
    }
    c->host_gaps[c->nhost_gaps++] = (xpv_tool_ival){start, end};
}

/* ---- the events over the gaps ---- */

typedef struct {
    uint32_t track, name;
    int64_t s, e, block, ov;
    uint32_t index;
} blamed;

enum { NAME_UNSEEN = 0, NAME_KEEP = 1, NAME_FRAME = 2 };

typedef struct {
    xpv_fctx *c;
    xpv_api_strings *str;
    uint8_t *kind; /* by name id: NAME_* */
    size_t nkind;
    blamed *v;
    size_t n, cap;
} blame_scan;

/* "$make_profiles.py:108 batch" (JAX) or "train.py(42): step" (PyTorch),
 * or no name at all (xplane's "<UNKNOWN>"): nothing to blame by name. */
static int is_frame(const char *s, size_t n)
{
    if (!n || s[0] == '$' || (n == 9 && memcmp(s, "<UNKNOWN>", 9) == 0)) return 1;
    const char *p = memmem(s, n, ".py(", 4);
    if (!p) return 0;
    p += 4;
    while (p < s + n && *p >= '0' && *p <= '9')
        p++;
    return p + 1 < s + n && p[0] == ')' && p[1] == ':';
}

static int is_frame_id(blame_scan *b, uint32_t name)
{
    if (name >= b->nkind || b->kind[name] == NAME_UNSEEN) {
        b->kind = xpv_grow_to_index(b->kind, &b->nkind, name, 1, 0);
        size_t n;
        const char *s = xpv_api_string(b->str, name, &n);
        b->kind[name] = is_frame(s, n) ? NAME_FRAME : NAME_KEEP;
    }
    return b->kind[name] == NAME_FRAME;
}

/* Whether [s, e) holds a whole window (an outer loop, not a step's work). */
static int holds_window(const xpv_fctx *c, int64_t s, int64_t e)
{
    size_t i =
        xpv_lower_bound_i64(c->win, c->nwin, sizeof *c->win, offsetof(xpv_fwindow, start), s);
    return i < c->nwin && c->win[i].end <= e;
}

/* How much of [s, e) the host gaps hold. */
static int64_t gap_overlap(const xpv_fctx *c, int64_t s, int64_t e)
{
    return xpv_tool_ivals_len_in(c->host_gaps, c->nhost_gaps, s, e);
}

static int blame_visit(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    blame_scan *b = ctx;
    xpv_fctx *c = b->c;
    if (ev->dur_ps <= 0 || b->n >= MAX_BLAMED) return 0;
    if (ev->track < c->ntracks && c->track_device[ev->track] >= 0) return 0;
    int64_t s = (ev->ts_ns - c->prof.base_ns) * 1000, e = s + ev->dur_ps;
    int64_t ov = gap_overlap(c, s, e);
    if (!ov || holds_window(c, s, e) || is_frame_id(b, ev->name)) return 0;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 256;
        b->v = xpv_xrealloc(b->v, b->cap * sizeof *b->v);
    }
    b->v[b->n++] = (blamed){ev->track, ev->name, s, e, block, ov, index};
    return 0;
}

/* By thread, then start, outer (longer) first. */
static int by_thread(const void *pa, const void *pb)
{
    const blamed *a = pa, *b = pb;
    if (a->track != b->track) return a->track < b->track ? -1 : 1;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return a->e > b->e ? -1 : a->e < b->e;
}

static int by_name(const void *pa, const void *pb)
{
    const blamed *a = pa, *b = pb;
    return a->name < b->name ? -1 : a->name > b->name;
}

static int by_blame(const void *pa, const void *pb)
{
    const xpv_fblame *a = pa, *b = pb;
    if (a->ps != b->ps) return a->ps > b->ps ? -1 : 1;
    return a->name < b->name ? -1 : a->name > b->name;
}

/* Keeps the outermost of each thread's nested events (in place). */
static size_t outermost(blamed *v, size_t n)
{
    xpv_sort(v, n, sizeof *v, by_thread);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        const blamed *o = out ? &v[out - 1] : NULL;
        if (o && o->track == v[i].track && v[i].e <= o->e) continue;
        v[out++] = v[i];
    }
    return out;
}

/* Sums the kept events by name into c->blame, most first. */
static void sum_by_name(xpv_fctx *c, blamed *v, size_t n)
{
    xpv_sort(v, n, sizeof *v, by_name);
    c->blame = xpv_xmalloc((n ? n : 1) * sizeof *c->blame);
    for (size_t i = 0; i < n; i++) {
        xpv_fblame *f = c->nblame ? &c->blame[c->nblame - 1] : NULL;
        if (!f || f->name != v[i].name) {
            f = &c->blame[c->nblame++];
            memset(f, 0, sizeof *f);
            f->name = v[i].name;
        }
        f->ps += v[i].ov, f->n++;
        if (v[i].ov > f->ref_ps) {
            f->ref_ps = v[i].ov;
            f->ref = (xpv_fref){1, v[i].block, v[i].index, v[i].s, v[i].e};
        }
    }
    xpv_sort(c->blame, c->nblame, sizeof *c->blame, by_blame);
}

int xpv_findings_blame_host(xpv_fctx *c, xpv_err *err)
{
    if (!c->nhost_gaps) return 0;
    c->nhost_gaps = xpv_tool_ivals_normalize(c->host_gaps, c->nhost_gaps);
    blame_scan b = {.c = c, .str = xpv_api_strings_open(c->db, c->id)};
    xpv_store_query q;
    xpv_store_query_all(&q, c->id);
    q.kinds = XPV_KIND_BIT(XPV_KIND_OTHER);
    q.t0 = c->prof.base_ns + c->host_gaps[0].start / 1000; /* events overlapping the gaps */
    q.t1 = c->prof.base_ns + (c->host_gaps[c->nhost_gaps - 1].end + 999) / 1000;
    q.skip_args = 1;
    int rc = xpv_store_scan(c->db, &q, blame_visit, &b, err);
    xpv_api_strings_free(b.str);
    free(b.kind);
    if (rc == 0) sum_by_name(c, b.v, outermost(b.v, b.n));
    free(b.v);
    return rc == 0 ? 0 : -1;
}

/* ---- the finding ---- */

/* "data_loading 3.20 ms, log_metrics 1.10 ms" of the first names. */
static void blame_text(const xpv_fctx *c, xpv_api_strings *str, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < c->nblame && i < 3 && at < len; i++) {
        size_t n;
        const char *s = xpv_api_string(str, c->blame[i].name, &n);
        char d[32];
        at +=
            (size_t)snprintf(buf + at, len - at, "%s%.*s %s", i ? ", " : "", (int)(n > 80 ? 80 : n),
                             s, xpv_findings_dur(c->blame[i].ps, d, sizeof d));
    }
}

static void name_evidence(const xpv_fctx *c, xpv_api_strings *str, xpv_finding *f)
{
    char d[32];
    for (size_t i = 0; i < c->nblame && i < NAMES_SHOWN; i++) {
        const xpv_fblame *b = &c->blame[i];
        size_t n;
        const char *s = xpv_api_string(str, b->name, &n);
        xpv_finding_evidence(f, b->ref.start, b->ref.end, &b->ref,
                             "%.*s: %s of the devices' wait, %lld time%s", (int)(n > 120 ? 120 : n),
                             s, xpv_findings_dur(b->ps, d, sizeof d), (long long)b->n,
                             b->n == 1 ? "" : "s");
    }
}

static int64_t key_host(const xpv_fwindow *w)
{
    return w->host_wait;
}

static void host_text(xpv_fctx *c, xpv_finding *f, int64_t wait, double share, size_t steps)
{
    int64_t graphs = 0, kernels = 0;
    for (size_t i = 0; i < c->nwin; i++)
        if (xpv_findings_graph_run(&c->win[i]))
            graphs += c->win[i].graph_launches, kernels += c->win[i].graph_kernels;
    char d[32], names[320], lat[200], steps_text[96] = "";
    if (steps < c->nwin)
        snprintf(steps_text, sizeof steps_text, " in the %zu of %zu steps graphs ran", steps,
                 c->nwin);
    xpv_api_strings *str = xpv_api_strings_open(c->db, c->id);
    blame_text(c, str, names, sizeof names);
    xpv_findings_latency_text(c->graph_latency, c->ngraph_latency, 0,
                              "Graph launch to its first kernel", lat, sizeof lat);
    xpv_finding_title(f,
                      "Host-bound: between CUDA graph launches the devices wait for the host"
                      " %.1f%% of the step time (%s)%s",
                      share * 100, xpv_findings_dur(wait, d, sizeof d), steps_text);
    xpv_finding_explain(f,
                        "The kernels already run as CUDA graphs (%lld graph launches ran %lld"
                        " kernels), so launching them is not the cost: the devices idle while"
                        " the host works between graph launches%s%s. Take that work off the"
                        " step's path (prefetch input, log without a sync, dispatch the next"
                        " step first).%s",
                        (long long)graphs, (long long)kernels, names[0] ? ": " : "", names, lat);
    name_evidence(c, str, f);
    xpv_api_strings_free(str);
}

void xpv_findings_host(xpv_fctx *c, xpv_findings *out)
{
    if (!c->has_steps) return;
    int64_t wait = 0, step = 0;
    size_t steps = 0;
    for (size_t i = 0; i < c->nwin; i++) {
        if (!xpv_findings_graph_run(&c->win[i])) continue;
        wait += c->win[i].host_wait, step += c->win[i].host_len, steps++;
    }
    if (!steps) return;
    double share = step ? (double)wait / (double)step : 0;
    const xpv_findings_config *g = c->cfg;
    if (share < g->host_share_warn) return;
    int sev = share >= g->host_share_crit ? XPV_SEV_CRITICAL : XPV_SEV_WARNING;
    xpv_finding *f = xpv_findings_add(out, "host_bound", sev, share * 100, "% of step time",
                                      g->host_share_warn * 100);
    host_text(c, f, wait, share, steps);
    char d[32];
    size_t top[3], n = xpv_findings_top_windows(c, key_host, top, 3);
    for (size_t i = 0; i < n && f->nev < XPV_FMAX_EVIDENCE; i++) {
        const xpv_fwindow *w = &c->win[top[i]];
        xpv_finding_evidence(f, w->start, w->span_end, NULL, "step %lld: waited %s (%.1f%%)",
                             (long long)w->step, xpv_findings_dur(w->host_wait, d, sizeof d),
                             100.0 * (double)w->host_wait / (double)w->host_len);
    }
}
