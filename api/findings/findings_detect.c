/*
 * findings_detect.c — the findings made from the scans' measurements:
 * compilation and recompilation, input stalls, collectives and their
 * exposed part, host-device copies (time, bytes, synchronous and pageable
 * ones) and launch overhead.
 *
 * Shares are of device time: the sum over the devices that worked in a
 * window of the window's length, so one busy device among eight idle ones
 * is not diluted by them and two devices never make more than 100%.
 */
#include "findings_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int severity(double v, double warn, double crit)
{
    return v >= crit ? XPV_SEV_CRITICAL : v >= warn ? XPV_SEV_WARNING : XPV_SEV_INFO;
}

static const char *what_windows(const xpv_fctx *c)
{
    return c->has_steps ? "step time" : "the profile's time";
}

static void window_label(const xpv_fwindow *w, char *buf, size_t n)
{
    if (w->step >= 0)
        snprintf(buf, n, "step %lld", (long long)w->step);
    else
        snprintf(buf, n, "the profile");
}

/* Indexes of the (at most k) windows with the largest key, largest first. */
size_t xpv_findings_top_windows(const xpv_fctx *c, int64_t (*key)(const xpv_fwindow *), size_t *out,
                                size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nwin; i++) {
        int64_t v = key(&c->win[i]);
        if (v <= 0) continue;
        size_t at = n < k ? n++ : k;
        while (at > 0 && key(&c->win[out[at - 1]]) < v) {
            if (at < k) out[at] = out[at - 1];
            at--;
        }
        if (at < k) out[at] = i;
    }
    return n;
}

int64_t xpv_findings_device_time(const xpv_fctx *c)
{
    int64_t t = 0;
    for (size_t i = 0; i < c->nwin; i++)
        t += c->has_steps ? c->win[i].dev_window : c->win[i].active;
    return t;
}

/* ---- compilation ---- */

static int by_start(const void *a, const void *b)
{
    const xpv_fcompile *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

/* The outermost compilations (a compile inside another is its part). */
static size_t outermost(const xpv_fctx *c, xpv_fcompile *v)
{
    memcpy(v, c->compiles, c->ncompiles * sizeof *v);
    qsort(v, c->ncompiles, sizeof *v, by_start);
    size_t n = 0;
    for (size_t i = 0; i < c->ncompiles; i++) {
        if (n && v[i].end <= v[n - 1].end) {
            if (!v[n - 1].module[0]) memcpy(v[n - 1].module, v[i].module, sizeof v[i].module);
            continue;
        }
        v[n++] = v[i];
    }
    return n;
}

static void compile_step_label(const xpv_fctx *c, const xpv_fcompile *k, char *buf, size_t n)
{
    buf[0] = 0;
    for (size_t i = 0; i < c->nwin && c->has_steps; i++)
        if (c->win[i].start < k->end && k->start < c->win[i].end) {
            snprintf(buf, n, ", in step %lld", (long long)c->win[i].step);
            return;
        }
    if (c->has_steps) snprintf(buf, n, ", outside the steps");
}

static void recompilation(const xpv_fctx *c, const xpv_fcompile *v, size_t n, xpv_findings *out)
{
    xpv_finding *f = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].module[0]) continue;
        size_t times = 0, first = 1;
        for (size_t j = 0; j < n; j++) {
            if (strcmp(v[j].module, v[i].module) != 0) continue;
            if (j < i) first = 0;
            times++;
        }
        if (!first || times < 2) continue;
        if (!f) {
            f = xpv_findings_add(out, "recompilation", XPV_SEV_WARNING, (double)times,
                                 "compilations", 2);
            xpv_finding_title(f, "%s was compiled %zu times", v[i].module, times);
            xpv_finding_explain(f, "The same function was compiled again while the program"
                                   " ran: a new input shape, dtype or static argument makes"
                                   " JIT compile anew, and the step waits for it.");
        }
        char where[64], d[32];
        for (size_t j = 0; j < n; j++)
            if (strcmp(v[j].module, v[i].module) == 0) {
                compile_step_label(c, &v[j], where, sizeof where);
                xpv_finding_evidence(f, v[j].start, v[j].end, &v[j].ref, "compile of %s: %s%s",
                                     v[j].module, xpv_findings_dur(v[j].end - v[j].start, d, 32),
                                     where);
            }
    }
}

void xpv_findings_compile(const xpv_fctx *c, xpv_findings *out)
{
    int64_t total =
        xpv_tool_ivals_len_in(c->compile_ivals, c->ncompile_ivals, INT64_MIN / 2, INT64_MAX / 2);
    if (!c->ncompiles || (double)total < c->cfg->compile_min_ms * 1e9) return;
    xpv_fcompile *v = xpv_xmalloc(c->ncompiles * sizeof *v);
    size_t n = outermost(c, v);
    int64_t in_steps = 0, step_time = 0, touched = 0;
    for (size_t i = 0; i < c->nwin && c->has_steps; i++) {
        in_steps += c->win[i].compile;
        step_time += c->win[i].end - c->win[i].start;
        touched += c->win[i].compile > 0;
    }
    double share = step_time ? (double)in_steps / (double)step_time : 0;
    int sev = !touched                                   ? XPV_SEV_INFO
              : share >= c->cfg->compile_step_share_crit ? XPV_SEV_CRITICAL
                                                         : XPV_SEV_WARNING;
    char d[32], d2[32], where[64];
    xpv_finding *f = xpv_findings_add(out, "compilation", sev, (double)total / 1e9, "ms",
                                      c->cfg->compile_min_ms);
    xpv_finding_title(f,
                      "Compilation in the profiled window: %s in %zu compilation%s, %lld step%s"
                      " touched",
                      xpv_findings_dur(total, d, sizeof d), n, n == 1 ? "" : "s",
                      (long long)touched, touched == 1 ? "" : "s");
    xpv_finding_explain(f,
                        "JIT compilation should happen before the steady state; %s of it"
                        " fell inside steps (%.1f%% of step time), where the program waits"
                        " for it.",
                        xpv_findings_dur(in_steps, d2, sizeof d2), share * 100);
    for (size_t i = 0; i < n; i++) {
        compile_step_label(c, &v[i], where, sizeof where);
        xpv_finding_evidence(f, v[i].start, v[i].end, &v[i].ref, "compilation%s%s: %s%s",
                             v[i].module[0] ? " of " : "", v[i].module,
                             xpv_findings_dur(v[i].end - v[i].start, d, sizeof d), where);
    }
    recompilation(c, v, n, out);
    free(v);
}

/* ---- input ---- */

static int64_t key_input(const xpv_fwindow *w)
{
    return w->input_wait;
}

void xpv_findings_input(const xpv_fctx *c, xpv_findings *out)
{
    if (!c->has_steps) return;
    int64_t wait = 0, step = 0;
    for (size_t i = 0; i < c->nwin; i++)
        wait += c->win[i].input_wait, step += c->win[i].host_len;
    double share = step ? (double)wait / (double)step : 0;
    if (share < c->cfg->input_share_warn) return;
    char d[32];
    xpv_finding *f = xpv_findings_add(
        out, "input_bound", severity(share, c->cfg->input_share_warn, c->cfg->input_share_crit),
        share * 100, "% of step time", c->cfg->input_share_warn * 100);
    xpv_finding_title(f, "Input-bound: the devices wait for input %.1f%% of the step time (%s)",
                      share * 100, xpv_findings_dur(wait, d, sizeof d));
    xpv_finding_explain(f, "The devices sit idle while the host loads and prepares the next"
                           " batch; prefetching or more loader workers let the devices start"
                           " at once.");
    size_t top[5], n = xpv_findings_top_windows(c, key_input, top, 5);
    for (size_t i = 0; i < n; i++) {
        const xpv_fwindow *w = &c->win[top[i]];
        xpv_finding_evidence(f, w->start, w->span_end, NULL, "step %lld: waited %s (%.1f%%)",
                             (long long)w->step, xpv_findings_dur(w->input_wait, d, sizeof d),
                             100.0 * (double)w->input_wait / (double)w->host_len);
    }
}

/* ---- collectives ---- */

static int64_t key_exposed(const xpv_fwindow *w)
{
    return w->exposed;
}

void xpv_findings_collectives(const xpv_fctx *c, xpv_findings *out)
{
    int64_t coll = 0, exposed = 0, dev = xpv_findings_device_time(c);
    for (size_t i = 0; i < c->nwin; i++)
        coll += c->win[i].collective, exposed += c->win[i].exposed;
    if (!coll || !dev) return;
    double share = (double)coll / (double)dev, eshare = (double)exposed / (double)dev;
    const xpv_findings_config *k = c->cfg;
    if (eshare < k->exposed_share_warn && share < k->collective_share_info) return;
    int exp = eshare >= k->exposed_share_warn;
    char d[32], d2[32], lab[32];
    xpv_finding *f = xpv_findings_add(
        out, exp ? "exposed_collectives" : "collectives",
        exp ? severity(eshare, k->exposed_share_warn, k->exposed_share_crit) : XPV_SEV_INFO,
        (exp ? eshare : share) * 100, "% of device time",
        (exp ? k->exposed_share_warn : k->collective_share_info) * 100);
    xpv_finding_title(f,
                      "Collectives take %.1f%% of device %s (%s); %.1f%% (%s) is exposed, with"
                      " no compute beside it",
                      share * 100, what_windows(c), xpv_findings_dur(coll, d, sizeof d),
                      eshare * 100, xpv_findings_dur(exposed, d2, sizeof d2));
    xpv_finding_explain(f, "Communication that no computation overlaps stalls the device;"
                           " overlapping gradient all-reduces with the backward pass, or larger"
                           " buckets, hide it.");
    size_t top[5], n = xpv_findings_top_windows(c, key_exposed, top, 5);
    for (size_t i = 0; i < n; i++) {
        const xpv_fwindow *w = &c->win[top[i]];
        window_label(w, lab, sizeof lab);
        xpv_finding_evidence(f, w->start, w->end, &w->exposed_ev,
                             "%s: %s exposed of %s in collectives", lab,
                             xpv_findings_dur(w->exposed, d, sizeof d),
                             xpv_findings_dur(w->collective, d2, sizeof d2));
    }
}
