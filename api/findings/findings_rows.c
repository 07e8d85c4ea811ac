/*
 * findings_rows.c — the findings read from the index's summary tables:
 * step outliers (steps table: how much slower than the median, and which
 * categories grew; compile time left out, and steps slow mostly because
 * they compiled named as such instead), hot spots (kernel_stats: the few kernels or XLA ops
 * that make most of the device time) and idle devices (kernel_stats per
 * device, against the busiest device).
 */
#include "findings_internal.h"
#include "../../store/kernel_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CATEGORY[6] = {"compute", "collectives", "copies",
                                        "memset",  "idle",        "host wait"};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of v (n > 0), which it sorts; the lower middle when n is even. */
static int64_t median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return v[(n - 1) / 2];
}

/* "idle +20.1 ms, compute +1.2 ms": the categories that grew the most. */
static void growth_text(const xpv_fwindow *w, const int64_t *med, const int *has, char *buf,
                        size_t n)
{
    int used[6] = {0};
    size_t len = 0;
    buf[0] = 0;
    for (int r = 0; r < 2; r++) {
        int best = -1;
        for (int k = 0; k < 6; k++)
            if (has[k] && w->has_cat[k] && !used[k] && w->cat[k] - med[k] > 0 &&
                (best < 0 || w->cat[k] - med[k] > w->cat[best] - med[best]))
                best = k;
        if (best < 0) break;
        used[best] = 1;
        char d[32];
        len += (size_t)snprintf(buf + len, n - len, "%s%s +%s", r ? ", " : "; ", CATEGORY[best],
                                xpv_findings_dur(w->cat[best] - med[best], d, sizeof d));
        if (len >= n) break;
    }
}

static void category_medians(const xpv_fctx *c, int64_t *tmp, int64_t *med, int *has)
{
    for (int k = 0; k < 6; k++) {
        size_t m = 0;
        for (size_t i = 0; i < c->nwin; i++)
            if (c->win[i].has_cat[k]) tmp[m++] = c->win[i].cat[k];
        has[k] = m == c->nwin;
        med[k] = m ? median(tmp, m) : 0;
    }
}

/* The compilation inside window w: the steps table's (indexer/analysis/
 * compile.c) when it has one, else what the host scan found. */
static int64_t compile_in(const xpv_fwindow *w)
{
    return w->has_step_compile ? w->step_compile : w->compile;
}

/* Steps whose excess over the median is mostly compilation: named as
 * compiled, not as outliers (their time says when JAX compiled, not that
 * the step is slow). */
static int is_compiled_step(const xpv_fwindow *w, int64_t median_ps, double factor)
{
    int64_t dur = w->end - w->start, excess = dur - median_ps, c = compile_in(w);
    return (double)dur >= factor * (double)median_ps && c > 0 && 2 * c >= excess;
}

static void compiled_steps(const xpv_fctx *c, int64_t m, xpv_findings *out)
{
    const xpv_findings_config *g = c->cfg;
    size_t n = 0, worst = 0;
    int64_t total = 0;
    for (size_t i = 0; i < c->nwin; i++) {
        if (!is_compiled_step(&c->win[i], m, g->step_outlier_factor)) continue;
        if (!n++ || compile_in(&c->win[i]) > compile_in(&c->win[worst])) worst = i;
        total += compile_in(&c->win[i]);
    }
    if (!n) return;
    char a[32], b[32], d[32];
    xpv_finding *f = xpv_findings_add(out, "step_compilation", XPV_SEV_WARNING, (double)total / 1e9,
                                      "ms", g->compile_min_ms);
    xpv_finding_title(f, "%zu step%s compiled: step %lld compiled for %s", n,
                      n == 1 ? " was" : "s were", (long long)c->win[worst].step,
                      xpv_findings_dur(compile_in(&c->win[worst]), a, sizeof a));
    xpv_finding_explain(f, "These steps took longer than the others because JAX compiled the"
                           " step function in them (the first call, or a new input shape);"
                           " they are left out of the step outliers, and compile time out of"
                           " the median they are compared with.");
    for (size_t i = 0; i < c->nwin; i++) {
        const xpv_fwindow *w = &c->win[i];
        if (!is_compiled_step(w, m, g->step_outlier_factor)) continue;
        xpv_finding_evidence(f, w->start, w->end, NULL,
                             "step %lld compiled for %s of its %s (autotuning on the device: %s)",
                             (long long)w->step, xpv_findings_dur(compile_in(w), a, sizeof a),
                             xpv_findings_dur(w->end - w->start, b, sizeof b),
                             xpv_findings_dur(w->autotune, d, sizeof d));
    }
}

int xpv_findings_step_outliers(const xpv_fctx *c, xpv_findings *out, xpv_err *err)
{
    (void)err;
    const xpv_findings_config *g = c->cfg;
    if (!c->has_steps || (double)c->nwin < g->step_outlier_min_steps || c->nwin < 2) return 0;
    int64_t *tmp = xpv_xmalloc(c->nwin * sizeof *tmp), med[6];
    int has[6];
    /* the statistic leaves compile time out: a compile says nothing of the
     * steady state */
    for (size_t i = 0; i < c->nwin; i++)
        tmp[i] = c->win[i].end - c->win[i].start - compile_in(&c->win[i]);
    int64_t m = median(tmp, c->nwin);
    category_medians(c, tmp, med, has);
    free(tmp);
    if (m <= 0) return 0;
    compiled_steps(c, m, out);
    size_t nout = 0, worst = 0;
    double worst_ratio = 0;
    for (size_t i = 0; i < c->nwin; i++) {
        const xpv_fwindow *w = &c->win[i];
        double r = (double)(w->end - w->start - compile_in(w)) / (double)m;
        if (r < g->step_outlier_factor || is_compiled_step(w, m, g->step_outlier_factor)) continue;
        if (r > worst_ratio) worst_ratio = r, worst = i;
        nout++;
    }
    if (!nout) return 0;
    char a[32], b[32], grew[160];
    xpv_finding *f = xpv_findings_add(out, "step_outliers", XPV_SEV_WARNING, worst_ratio,
                                      "x median", g->step_outlier_factor);
    xpv_finding_title(f, "%zu step%s much slower than the median of %s (worst: step %lld, %.2fx)",
                      nout, nout == 1 ? " is" : "s are", xpv_findings_dur(m, a, sizeof a),
                      (long long)c->win[worst].step, worst_ratio);
    xpv_finding_explain(f, "A step far slower than the others points at something that does"
                           " not happen every step (a data stall, a checkpoint, a"
                           " straggler); what grew in it says which. Compilation is left"
                           " out of these times (see step_compilation).");
    for (size_t i = 0; i < c->nwin; i++) {
        const xpv_fwindow *w = &c->win[i];
        double r = (double)(w->end - w->start - compile_in(w)) / (double)m;
        if (r < g->step_outlier_factor || is_compiled_step(w, m, g->step_outlier_factor)) continue;
        growth_text(w, med, has, grew, sizeof grew);
        xpv_finding_evidence(f, w->start, w->end, NULL, "step %lld: %s, %.2fx the median%s",
                             (long long)w->step, xpv_findings_dur(w->end - w->start, b, sizeof b),
                             r, grew);
    }
    return 0;
}

/* ---- hot spots ---- */

int xpv_findings_hot_names(xpv_fctx *c, xpv_err *err)
{
    xpv_store_cursor cur;
    if (xpv_store_kernel_stats_open_hot(&cur, c->db, c->id, XPV_FHOT, err) != 0) return -1;
    xpv_store_kernel_hot r;
    int rc;
    while ((rc = xpv_store_kernel_stats_hot_next(&cur, &r, err)) == 1 && c->nhot < XPV_FHOT) {
        snprintf(c->hot_label[c->nhot], sizeof c->hot_label[0], "%s", r.name.s ? r.name.s : "");
        c->hot_ps[c->nhot] = r.total_ps;
        c->hot_total = r.kind_total_ps;
        c->hot_name[c->nhot] = (uint32_t)r.name_id;
        c->nhot++;
    }
    xpv_store_cursor_close(&cur);
    return rc < 0 ? -1 : 0;
}

void xpv_findings_hot_spots(const xpv_fctx *c, xpv_findings *out)
{
    int64_t top = 0;
    for (int i = 0; i < c->nhot; i++)
        top += c->hot_ps[i];
    if (!c->nhot || c->hot_total <= 0) return;
    double share = (double)top / (double)c->hot_total;
    if (share < c->cfg->hot_spot_top_share) return;
    const char *what = c->prof.no_kernels ? "XLA ops" : "kernels";
    xpv_finding *f = xpv_findings_add(out, "hot_spots", XPV_SEV_INFO, share * 100,
                                      "% of device time", c->cfg->hot_spot_top_share * 100);
    if (c->nhot == 1)
        xpv_finding_title(f, "One kind of %s makes all the device time", what);
    else
        xpv_finding_title(f, "The top %d %s make %.1f%% of the device time; the first alone %.1f%%",
                          c->nhot, what, share * 100,
                          100.0 * (double)c->hot_ps[0] / (double)c->hot_total);
    xpv_finding_explain(f,
                        "Speeding up these few %s is what shortens the step; the rest"
                        " together matter less.",
                        what);
    char d[32];
    for (int i = 0; i < c->nhot; i++) {
        const xpv_fref *r = &c->hot_ev[i];
        xpv_finding_evidence(
            f, r->set ? r->start : 0, r->set ? r->end : c->span, r, "%.1f%% %s (%s in all)%s",
            100.0 * (double)c->hot_ps[i] / (double)c->hot_total, c->hot_label[i],
            xpv_findings_dur(c->hot_ps[i], d, sizeof d), r->set ? "; its longest run" : "");
    }
}

/* ---- idle devices ---- */

int xpv_findings_idle_devices(const xpv_fctx *c, xpv_findings *out, xpv_err *err)
{
    xpv_store_cursor cur;
    if (xpv_store_kernel_stats_open_device_busy(&cur, c->db, c->id,
                                                c->prof.no_kernels ? "xla_op" : "kernel", err) != 0)
        return -1;
    int64_t dev[256], busy[256], max = 0;
    size_t n = 0;
    int rc = 0;
    while (n < 256 &&
           (rc = xpv_store_kernel_stats_device_busy_next(&cur, &dev[n], &busy[n], err)) == 1) {
        if (busy[n] > max) max = busy[n];
        n++;
    }
    xpv_store_cursor_close(&cur);
    if (rc < 0) return -1;
    size_t idle = 0;
    for (size_t i = 0; i < n; i++)
        idle += (double)busy[i] < c->cfg->idle_device_share * (double)max;
    if (n < 2 || max <= 0 || !idle) return 0;
    char d[32], m[32];
    xpv_finding *f = xpv_findings_add(out, "idle_devices", XPV_SEV_WARNING, (double)idle, "devices",
                                      c->cfg->idle_device_share * 100);
    xpv_finding_title(f,
                      "%zu of %zu devices are idle: busy less than %.0f%% of the busiest"
                      " device's %s",
                      idle, n, c->cfg->idle_device_share * 100, xpv_findings_dur(max, m, sizeof m));
    xpv_finding_explain(f, "Devices that wait while others work are paid for and unused; check"
                           " how the work is sharded or placed.");
    for (size_t i = 0; i < n; i++)
        if ((double)busy[i] < c->cfg->idle_device_share * (double)max)
            xpv_finding_evidence(f, 0, c->span, NULL, "device %lld: busy %s (%.1f%%)",
                                 (long long)dev[i], xpv_findings_dur(busy[i], d, sizeof d),
                                 100.0 * (double)busy[i] / (double)max);
    return 0;
}
