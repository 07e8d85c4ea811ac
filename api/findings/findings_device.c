/*
 * findings_device.c — the findings about how the host feeds the devices:
 * host-device copies (their share of device time, bytes per step),
 * synchronous copies, copies from pageable memory, and launch overhead
 * (many short kernels with longer idle gaps between them, and the launch
 * latency by correlation id). A CUDA graph is one launch however many
 * kernels it runs (findings_window.c); in a window where graphs run most
 * kernels the gaps are the host's, judged by findings_host.c, not launch
 * overhead.
 */
#include "findings_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- copies ---- */

static int64_t key_copies(const xpv_fwindow *w)
{
    return w->h2d + w->d2h;
}

/* The windows with the most copy time, with their longest copy. */
static void copy_evidence(const xpv_fctx *c, xpv_finding *f)
{
    char d[32], lab[32];
    size_t top[5], n = xpv_findings_top_windows(c, key_copies, top, 5);
    for (size_t i = 0; i < n; i++) {
        const xpv_fwindow *w = &c->win[top[i]];
        snprintf(lab, sizeof lab, w->step >= 0 ? "step %lld" : "slice", (long long)w->step);
        xpv_finding_evidence(f, w->start, w->end, &w->copy_ev, "%s: %s of copies", lab,
                             xpv_findings_dur(w->h2d + w->d2h, d, sizeof d));
    }
}

static void bytes_text(const xpv_fctx *c, size_t nsteps, char *buf, size_t n)
{
    int64_t h = 0, d = 0;
    int any = 0;
    for (size_t i = 0; i < c->nwin; i++)
        h += c->win[i].h2d_bytes, d += c->win[i].d2h_bytes, any |= c->win[i].has_bytes;
    if (!any) {
        snprintf(buf, n, "; the profile does not say how many bytes");
        return;
    }
    double div = c->has_steps && nsteps ? (double)nsteps : 1;
    snprintf(buf, n, "; %.2f MB H2D and %.2f MB D2H%s", (double)h / div / 1e6,
             (double)d / div / 1e6, c->has_steps ? " per step" : " in all");
}

static void transfers_share(const xpv_fctx *c, xpv_findings *out)
{
    int64_t h2d = 0, d2h = 0, dev = xpv_findings_device_time(c);
    for (size_t i = 0; i < c->nwin; i++)
        h2d += c->win[i].h2d, d2h += c->win[i].d2h;
    double share = dev ? (double)(h2d + d2h) / (double)dev : 0;
    const xpv_findings_config *k = c->cfg;
    if (!dev || share < k->transfer_share_warn) return;
    size_t nsteps = c->has_steps ? c->nwin : 1;
    char a[32], b[32], bytes[128];
    bytes_text(c, nsteps, bytes, sizeof bytes);
    int sev = share >= k->transfer_share_crit ? XPV_SEV_CRITICAL : XPV_SEV_WARNING;
    xpv_finding *f = xpv_findings_add(out, "transfers", sev, share * 100, "% of device time",
                                      k->transfer_share_warn * 100);
    xpv_finding_title(f, "Host-device copies take %.1f%% of device %s: H2D %s, D2H %s%s%s",
                      share * 100, c->has_steps ? "step time" : "time",
                      xpv_findings_dur(h2d / (int64_t)nsteps, a, sizeof a),
                      xpv_findings_dur(d2h / (int64_t)nsteps, b, sizeof b),
                      c->has_steps ? " per step" : "", bytes);
    xpv_finding_explain(f, "Copying between host and device memory keeps the device from"
                           " computing; keep data on the device, or overlap the copies with"
                           " compute from pinned memory.");
    copy_evidence(c, f);
}

static void sync_copies(const xpv_fctx *c, xpv_findings *out)
{
    int64_t n = 0;
    for (size_t i = 0; i < c->nwin && c->has_steps; i++)
        n += c->win[i].sync_copies;
    if (!c->has_steps) n = (int64_t)c->nsync;
    if (!n) return;
    double per = c->has_steps ? (double)n / (double)c->nwin : (double)n;
    int sev =
        c->has_steps && per >= c->cfg->sync_copies_per_step_warn ? XPV_SEV_WARNING : XPV_SEV_INFO;
    xpv_finding *f =
        xpv_findings_add(out, "sync_copies", sev, per, c->has_steps ? "per step" : "copies",
                         c->cfg->sync_copies_per_step_warn);
    if (c->has_steps)
        xpv_finding_title(f, "%lld synchronous cop%s in %zu step%s (%.2f per step)", (long long)n,
                          n == 1 ? "y" : "ies", c->nwin, c->nwin == 1 ? "" : "s", per);
    else
        xpv_finding_title(f, "%lld synchronous cop%s (cudaMemcpy and the like)", (long long)n,
                          n == 1 ? "y" : "ies");
    xpv_finding_explain(f, "A synchronous copy blocks the host until the device has finished"
                           " everything queued before it, so the next launches wait; use the"
                           " Async copy from pinned memory.");
    int k = 0;
    for (size_t i = 0; i < c->nwin && k < 5; i++) {
        const xpv_fwindow *w = &c->win[i];
        if (!w->sync_copies) continue;
        char lab[32] = "slice";
        if (w->step >= 0) snprintf(lab, sizeof lab, "step %lld", (long long)w->step);
        xpv_finding_evidence(f, w->start, w->span_end, &w->sync_ev, "%s: %lld synchronous cop%s",
                             lab, (long long)w->sync_copies, w->sync_copies == 1 ? "y" : "ies");
        k++;
    }
}

static void pageable(const xpv_fctx *c, xpv_findings *out)
{
    if (!c->pageable_n) return;
    char d[32];
    xpv_finding *f =
        xpv_findings_add(out, "pageable_memory", XPV_SEV_INFO, (double)c->pageable_n, "copies", 1);
    /* named when every copy has one name (the usual one H2D copy a step) */
    unsigned used = c->pageable_used;
    int one = used && !(used & (used - 1)) && c->pageable_longest >= 0;
    const char *name = c->pageable_longest >= 0 ? c->pageable_text[c->pageable_longest] : "";
    xpv_finding_title(f, "%lld cop%s from or to pageable memory (%s)%s%s", (long long)c->pageable_n,
                      c->pageable_n == 1 ? "y" : "ies",
                      xpv_findings_dur(c->pageable_time, d, sizeof d), one ? ": " : "",
                      one ? name : "");
    xpv_finding_explain(f, "A copy from pageable host memory is staged through a pinned buffer"
                           " and cannot overlap compute; pin the memory (pin_memory=True).");
    xpv_finding_evidence(f, c->pageable_ev.start, c->pageable_ev.end, &c->pageable_ev,
                         "the longest pageable copy%s%s: %s", *name ? ", " : "", name,
                         xpv_findings_dur(c->pageable_ev.end - c->pageable_ev.start, d, sizeof d));
}

void xpv_findings_transfers(const xpv_fctx *c, xpv_findings *out)
{
    transfers_share(c, out);
    sync_copies(c, out);
    pageable(c, out);
}

/* ---- launch overhead ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void xpv_findings_latency_text(int64_t *v, size_t n, int partial, const char *what, char *buf,
                               size_t len)
{
    buf[0] = 0;
    if (!n) return;
    qsort(v, n, sizeof *v, cmp_i64);
    char a[32], b[32], m[32];
    snprintf(buf, len, " %s: median %s, 90th percentile %s, max %s%s.", what,
             xpv_findings_dur(v[n / 2], a, sizeof a), xpv_findings_dur(v[n * 9 / 10], b, sizeof b),
             xpv_findings_dur(v[n - 1], m, sizeof m), partial ? " (of the first launches)" : "");
}

static int64_t key_idle(const xpv_fwindow *w)
{
    return w->idle_ev.set ? w->idle_in_active : 0;
}

/* The windows where the devices idled most between kernels. */
static void launch_evidence(const xpv_fctx *c, xpv_finding *f)
{
    char d[32], g[32], lab[32];
    size_t top[5], n = xpv_findings_top_windows(c, key_idle, top, 5);
    for (size_t i = 0; i < n; i++) {
        const xpv_fwindow *w = &c->win[top[i]];
        snprintf(lab, sizeof lab, w->step >= 0 ? "step %lld" : "slice", (long long)w->step);
        int64_t gap = w->idle_ev.end - w->idle_ev.start;
        xpv_finding_evidence(f, w->start, w->end, NULL,
                             "%s: %lld kernel%s, devices idle %s between them; the longest gap %s",
                             lab, (long long)w->kernels, w->kernels == 1 ? "" : "s",
                             xpv_findings_dur(w->idle_in_active, d, sizeof d),
                             xpv_findings_dur(gap, g, sizeof g));
    }
}

/* The launch units of all windows: kernels outside graphs, and graphs. */
typedef struct {
    int64_t kernels, graphs, graph_kernels;
    int64_t units, shorts, time, idle, active, gaps;
} launch_totals;

int xpv_findings_graph_run(const xpv_fwindow *w)
{
    return w->graph_kernels > 0 && w->graph_kernels * 2 >= w->kernels;
}

/* Over the windows that graphs did not run (the others are the host's,
 * findings_host.c). */
static launch_totals totals(const xpv_fctx *c)
{
    launch_totals t = {0};
    for (size_t i = 0; i < c->nwin; i++) {
        const xpv_fwindow *w = &c->win[i];
        if (xpv_findings_graph_run(w)) continue;
        t.kernels += w->kernels, t.graphs += w->graph_launches, t.graph_kernels += w->graph_kernels;
        t.units += w->units, t.shorts += w->short_units, t.time += w->unit_time;
        t.idle += w->launch_idle, t.active += w->active, t.gaps += w->launch_gaps;
    }
    return t;
}

static void launch_text(xpv_fctx *c, xpv_finding *f, const launch_totals *t, double short_share,
                        double idle_share, double mean_gap, double mean_unit)
{
    const xpv_findings_config *g = c->cfg;
    char a[32], b[32], lat[200], graphs[160] = "";
    xpv_findings_latency_text(c->latency, c->nlatency, (int64_t)c->nlatency < c->latency_seen,
                              "Launch to start, by correlation id", lat, sizeof lat);
    if (t->graphs)
        snprintf(graphs, sizeof graphs,
                 " (%lld CUDA graph launches, running %lld kernels, count"
                 " as one launch each)",
                 (long long)t->graphs, (long long)t->graph_kernels);
    xpv_finding_title(f,
                      "Launch-bound: %.0f%% of %lld %s are shorter than %g µs, and the"
                      " devices idle %.1f%% of their active time between %s",
                      short_share * 100, (long long)t->units, t->graphs ? "launches" : "kernels",
                      g->launch_short_kernel_us, idle_share * 100,
                      t->graphs ? "launches" : "kernels");
    xpv_finding_explain(f,
                        "The gaps between %s (%s on average) are longer than the %s"
                        " (%s): the host cannot launch work as fast as the device runs it;"
                        " fuse small ops, or capture %s in a CUDA graph%s.%s",
                        t->graphs ? "launches" : "kernels",
                        xpv_findings_dur((int64_t)mean_gap, a, sizeof a),
                        t->graphs ? "work they start" : "kernels",
                        xpv_findings_dur((int64_t)mean_unit, b, sizeof b),
                        t->graphs ? "the rest" : "them", graphs, lat);
}

void xpv_findings_launch(xpv_fctx *c, xpv_findings *out)
{
    if (c->prof.no_kernels) return;
    launch_totals t = totals(c);
    const xpv_findings_config *g = c->cfg;
    if (!t.units || !t.active || !t.gaps || (double)t.units < g->launch_min_kernels) return;
    double short_share = (double)t.shorts / (double)t.units;
    double idle_share = (double)t.idle / (double)t.active;
    double mean_gap = (double)t.idle / (double)t.gaps, mean_unit = (double)t.time / (double)t.units;
    if (short_share < g->launch_short_share || idle_share < g->launch_idle_share_warn ||
        mean_gap <= mean_unit)
        return;
    xpv_finding *f =
        xpv_findings_add(out, "launch_bound", XPV_SEV_WARNING, idle_share * 100,
                         "% of active device time idle", g->launch_idle_share_warn * 100);
    launch_text(c, f, &t, short_share, idle_share, mean_gap, mean_unit);
    launch_evidence(c, f);
}
