/*
 * findings.c — computing the findings answer (findings_keep.c answers
 * /api/profiles/{id}/findings with it, or with the one kept): loads what
 * the detectors need (tracks' devices, the step windows), runs the scans
 * and the detectors, and writes the findings most severe first.
 *
 * Invariant: a finding is only made from numbers the profile carries; a
 * detector whose data is missing (no steps, no kernels, no copies) makes
 * none rather than guessing.
 */
#include "findings_internal.h"
#include "../api.h"
#include "../api_util.h"
#include "../../store/tracks.h"
#include "../../store/steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slices of a profile without steps: enough that one holds a bounded part. */
#define MIN_SLICES 16
#define MAX_SLICES 4096
#define EVENTS_PER_SLICE 500000

/* ---- loading ---- */

static int load_tracks(xpv_fctx *c, xpv_err *err)
{
    xpv_store_cursor cur;
    if (xpv_store_tracks_open_devices(&cur, c->db, c->id, err) != 0) return -1;
    int64_t t;
    int device, rc;
    while ((rc = xpv_store_tracks_device_next(&cur, &t, &device, err)) == 1) {
        if (t < 0 || t > UINT32_MAX) continue;
        size_t old = c->ntracks;
        c->track_device =
            xpv_grow_to_index(c->track_device, &c->ntracks, (size_t)t, sizeof(int), 0);
        for (size_t i = old; i < c->ntracks; i++)
            c->track_device[i] = -1;
        c->track_device[t] = device;
    }
    xpv_store_cursor_close(&cur);
    return rc;
}

static void add_window(xpv_fctx *c, size_t *cap, int64_t step, int64_t start, int64_t end)
{
    if (c->nwin == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        c->win = xpv_xrealloc(c->win, *cap * sizeof *c->win);
    }
    xpv_fwindow *w = &c->win[c->nwin++];
    memset(w, 0, sizeof *w);
    w->step = step, w->start = start, w->end = w->span_end = end;
}

static int load_windows(xpv_fctx *c, int64_t events, xpv_err *err)
{
    xpv_store_cursor cur;
    if (xpv_store_steps_open_timed(&cur, c->db, c->id, err) != 0) return -1;
    size_t cap = 0;
    xpv_store_step r;
    int rc;
    while ((rc = xpv_store_steps_next(&cur, &r, err)) == 1) {
        int64_t s = r.ps[XPV_STORE_STEP_START];
        add_window(c, &cap, r.step, s, s + r.ps[XPV_STORE_STEP_DURATION]);
        xpv_fwindow *w = &c->win[c->nwin - 1];
        if (r.span_end_ps > w->end) w->span_end = r.span_end_ps;
        /* compute, collective, memcpy (summed), memset, idle, host wait */
        static const int8_t CAT[6] = {
            XPV_STORE_STEP_COMPUTE, XPV_STORE_STEP_COLLECTIVE, -1,
            XPV_STORE_STEP_MEMSET,  XPV_STORE_STEP_IDLE,       XPV_STORE_STEP_HOST_WAIT};
        for (int k = 0; k < 6; k++) {
            w->has_cat[k] = CAT[k] < 0 ? xpv_store_step_memcpy(&r, &w->cat[k])
                                       : xpv_store_step_known(&r, CAT[k]);
            if (CAT[k] >= 0) w->cat[k] = r.ps[CAT[k]];
        }
        w->has_step_compile = xpv_store_step_known(&r, XPV_STORE_STEP_COMPILE);
        w->step_compile = r.ps[XPV_STORE_STEP_COMPILE];
        w->autotune = r.ps[XPV_STORE_STEP_AUTOTUNE];
    }
    xpv_store_cursor_close(&cur);
    if (rc != 0 || xpv_findings_load_device_windows(c, err) != 0) return -1;
    c->has_steps = c->nwin > 0;
    if (c->has_steps || c->span <= 0) return 0;
    int64_t n = events / EVENTS_PER_SLICE;
    n = n < MIN_SLICES ? MIN_SLICES : n > MAX_SLICES ? MAX_SLICES : n;
    for (int64_t i = 0; i < n; i++)
        add_window(c, &cap, -1, c->span / n * i, i + 1 == n ? c->span + 1 : c->span / n * (i + 1));
    return 0;
}

static void ctx_free(xpv_fctx *c)
{
    xpv_tool_profile_free(&c->prof);
    free(c->track_device), free(c->cls), free(c->win), free(c->dw), free(c->compiles);
    free(c->input);
    free(c->compile_ivals), free(c->sync_t), free(c->sync_ref), free(c->latency);
    free(c->dev_last), free(c->graph_latency), free(c->host_gaps), free(c->blame);
}

/* ---- the answer ---- */

static const char *const SEVERITY[] = {"info", "warning", "critical"};

static void put_time(xpv_buf *b, const xpv_fctx *c, int64_t ps)
{
    xpv_api_put_us(b, c->prof.base_ns + ps / 1000);
}

static void put_evidence(xpv_buf *b, const xpv_fctx *c, const xpv_fevidence *e)
{
    xpv_buf_puts(b, "{\"start_us\":");
    put_time(b, c, e->start);
    xpv_buf_puts(b, ",\"end_us\":");
    put_time(b, c, e->end);
    if (e->has_ref)
        xpv_buf_printf(b, ",\"ref\":\"%lld:%u\"", (long long)e->block, e->index);
    else
        xpv_buf_puts(b, ",\"ref\":null");
    xpv_buf_puts(b, ",\"label\":");
    xpv_buf_json_str(b, e->label, strlen(e->label));
    xpv_buf_putc(b, '}');
}

static void put_finding(xpv_buf *b, const xpv_fctx *c, const xpv_finding *f)
{
    xpv_buf_printf(b, "{\"kind\":\"%s\",\"severity\":\"%s\",\"title\":", f->kind,
                   SEVERITY[f->severity]);
    xpv_buf_json_str(b, f->title, strlen(f->title));
    xpv_buf_puts(b, ",\"value\":");
    xpv_buf_json_double(b, f->value);
    xpv_buf_printf(b, ",\"unit\":\"%s\",\"threshold\":", f->unit);
    xpv_buf_json_double(b, f->threshold);
    xpv_buf_puts(b, ",\"explanation\":");
    xpv_buf_json_str(b, f->explanation, strlen(f->explanation));
    xpv_buf_puts(b, ",\"evidence\":[");
    for (size_t i = 0; i < f->nev; i++) {
        if (i) xpv_buf_putc(b, ',');
        put_evidence(b, c, &f->ev[i]);
    }
    xpv_buf_puts(b, "]}");
}

/* The answer after its head. Most severe first; within a severity, in the
 * detectors' order. */
static void put_body(xpv_buf *out, const xpv_fctx *c, const xpv_findings *l)
{
    xpv_buf_printf(out, ",\"complete\":%s,\"steps\":%zu,\"findings\":[",
                   c->truncated ? "false" : "true", c->has_steps ? c->nwin : (size_t)0);
    int first = 1;
    for (int sev = XPV_SEV_CRITICAL; sev >= XPV_SEV_INFO; sev--)
        for (size_t i = 0; i < l->n; i++) {
            if (l->v[i].severity != sev) continue;
            if (!first) xpv_buf_putc(out, ',');
            first = 0;
            put_finding(out, c, &l->v[i]);
        }
    xpv_buf_puts(out, "]}");
}

static int run(xpv_fctx *c, xpv_findings *l, xpv_err *err)
{
    if (xpv_findings_classify_names(c, err) || xpv_findings_hot_names(c, err) ||
        xpv_findings_scan_host(c, err) || xpv_findings_scan_windows(c, err) ||
        xpv_findings_blame_host(c, err))
        return -1;
    xpv_findings_compile(c, l);
    xpv_findings_input(c, l);
    xpv_findings_host(c, l);
    xpv_findings_collectives(c, l);
    xpv_findings_transfers(c, l);
    xpv_findings_launch(c, l);
    if (xpv_findings_step_outliers(c, l, err) != 0) return -1;
    xpv_findings_hot_spots(c, l);
    return xpv_findings_idle_devices(c, l, err);
}

int xpv_findings_body(sqlite3 *db, int64_t id, const xpv_findings_config *cfg,
                      const xpv_api_profile_state *ps, xpv_buf *out, xpv_err *err)
{
    xpv_fctx c = {.db = db, .id = id, .cfg = cfg};
    xpv_findings l = {0};
    int rc = xpv_tool_profile_load(db, id, &c.prof, err);
    if (rc == 0 && ps->has_span && c.prof.has_span) {
        c.span = (ps->end_ns - ps->start_ns) * 1000;
        rc = load_tracks(&c, err);
        if (rc == 0) rc = load_windows(&c, ps->events, err);
        if (rc == 0) rc = run(&c, &l, err);
    }
    if (rc == 0) put_body(out, &c, &l);
    ctx_free(&c);
    free(l.v);
    return rc;
}
