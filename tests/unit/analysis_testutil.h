/*
 * analysis_testutil.h — what the analysis tests (test_analysis.c for the
 * kernel summaries, test_analysis_steps.c for the step timelines) share:
 * a fresh index with profile 7, a real sink on it, hand-made device and
 * host events, queries of one value, and running tests on both store paths.
 */
#ifndef XPV_ANALYSIS_TESTUTIL_H
#define XPV_ANALYSIS_TESTUTIL_H

#include "sink_testutil.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <stdlib.h>

#define PROFILE 7

static inline sqlite3 *fresh_index(void)
{
    return xpv_test_fresh_index(xpv_test_tmpdir(), PROFILE);
}

static inline xpv_sink *open_sink(sqlite3 *db)
{
    return xpv_test_sink(db, PROFILE, NULL);
}

static inline void finish(xpv_sink *s)
{
    xpv_test_sink_finish(s);
}

/* A device event of `kind` on (pid, tid), start in ns, duration in ps,
 * with args[0, nargs). */
static inline void device_event_args(xpv_sink *s, int kind, int64_t pid, int64_t tid,
                                     const char *name, int64_t ts_ns, int64_t dur_ps, int64_t corr,
                                     const xpv_launch *l, const xpv_arg *args, uint32_t nargs)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, pid, tid);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts_ns;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps / 1000;
    ev.corr = corr;
    ev.launch = l;
    ev.args = args;
    ev.nargs = nargs;
    xpv_sink_event(s, &ev);
}

static inline void device_event(xpv_sink *s, int kind, int64_t pid, int64_t tid, const char *name,
                                int64_t ts_ns, int64_t dur_ps, int64_t corr, const xpv_launch *l)
{
    device_event_args(s, kind, pid, tid, name, ts_ns, dur_ps, corr, l, NULL, 0);
}

/* A device event with one string arg, key = value. */
static inline void device_event_arg(xpv_sink *s, int kind, int64_t pid, int64_t tid,
                                    const char *name, int64_t ts_ns, int64_t dur_ps, int64_t corr,
                                    const char *key, const char *value)
{
    xpv_arg arg = {.key = xpv_sink_intern_cstr(s, key),
                   .type = XPV_ARG_STR,
                   .v.str = xpv_sink_intern_cstr(s, value)};
    device_event_args(s, kind, pid, tid, name, ts_ns, dur_ps, corr, NULL, &arg, 1);
}

static inline void kernel(xpv_sink *s, int64_t pid, int64_t tid, const char *name, int64_t ts_ns,
                          int64_t dur_ps)
{
    device_event(s, XPV_KIND_KERNEL, pid, tid, name, ts_ns, dur_ps, -1, NULL);
}

static inline void host_event(xpv_sink *s, int kind, const char *cat, const char *name,
                              int64_t ts_ns, int64_t dur_ns, int64_t corr)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 1, 1);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.cat = cat ? xpv_sink_intern_cstr(s, cat) : 0;
    ev.ts_ns = ts_ns;
    ev.dur_ns = dur_ns;
    ev.dur_ps = dur_ns * 1000;
    ev.corr = corr;
    xpv_sink_event(s, &ev);
}

static inline int64_t q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bad query %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static inline char *q_text(sqlite3 *db, const char *sql)
{
    static char out[512];
    sqlite3_stmt *st;
    snprintf(out, sizeof out, "<none>");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return out;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, sizeof out, "%s", t ? (const char *)t : "<null>");
    }
    sqlite3_finalize(st);
    return out;
}

/* Runs each test with no capture (cap 0: finish reads the store) and with
 * one that overflows partway: the numbers must be those of the capture. */
static inline void run_on_store_paths(void (*const *tests)(void), size_t n)
{
    static const char *const caps[] = {"0", "5000"};
    for (int i = 0; i < 2; i++) {
        setenv("XPV_ANALYSIS_CAPTURE_CAP", caps[i], 1);
        for (size_t t = 0; t < n; t++)
            tests[t]();
    }
    unsetenv("XPV_ANALYSIS_CAPTURE_CAP");
}

#endif
