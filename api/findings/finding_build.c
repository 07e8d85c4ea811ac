/*
 * finding_build.c — the finding list the detectors fill: adding a finding,
 * its title, explanation and evidence, and the duration text they share.
 *
 * Below the detectors and the answer that runs them: it calls neither, so
 * each detector can be read (and built) with only this and the scans.
 */
#include "findings_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xpv_finding *xpv_findings_add(xpv_findings *l, const char *kind, int severity, double value,
                              const char *unit, double threshold)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = xpv_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    xpv_finding *f = &l->v[l->n++];
    memset(f, 0, sizeof *f);
    *f = (xpv_finding){
        .kind = kind, .unit = unit, .severity = severity, .value = value, .threshold = threshold};
    return f;
}

void xpv_finding_title(xpv_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->title, sizeof f->title, fmt, ap);
    va_end(ap);
}

void xpv_finding_explain(xpv_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->explanation, sizeof f->explanation, fmt, ap);
    va_end(ap);
}

void xpv_finding_evidence(xpv_finding *f, int64_t start, int64_t end, const xpv_fref *r,
                          const char *fmt, ...)
{
    if (f->nev >= XPV_FMAX_EVIDENCE) return;
    xpv_fevidence *e = &f->ev[f->nev++];
    memset(e, 0, sizeof *e);
    e->start = start, e->end = end;
    if (r && r->set && r->block >= 0) e->has_ref = 1, e->block = r->block, e->index = r->index;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->label, sizeof e->label, fmt, ap);
    va_end(ap);
}

const char *xpv_findings_dur(int64_t ps, char *buf, size_t n)
{
    double us = (double)ps / 1e6;
    if (us >= 1e6)
        snprintf(buf, n, "%.2f s", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, n, "%.2f ms", us / 1e3);
    else
        snprintf(buf, n, "%.1f µs", us);
    return buf;
}
