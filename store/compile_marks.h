/*
 * compile_marks.h — the `compile_marks` table (schema in index_db.c): what
 * the indexer's rule for compile-time device work (XLA autotuning inside
 * the capture, indexer/analysis/compile.c) needs to be applied again, per
 * event, by a reader of the event store (the HLO tools, api/hlo/hlo_ops.c),
 * so that they leave out exactly what kernel_stats' compile_<kind> rows
 * hold.
 *
 * A row is either a compile window (start_ns, end_ns: one of the disjoint,
 * sorted host compile spans' union, ns of the source clock; name NULL) or
 * the string id of a kernel name that is one of XLA's autotuner kernels
 * (name; start_ns and end_ns NULL). A profile without compile inside its
 * capture has no rows.
 */
#ifndef XPV_STORE_COMPILE_MARKS_H
#define XPV_STORE_COMPILE_MARKS_H

#include "cursor.h"

typedef struct {
    int64_t *start, *end; /* the windows, sorted by start (and so by end) */
    size_t nwindows;
    uint32_t *names; /* autotuner kernel name ids, sorted */
    size_t nnames;
} xpv_store_compile_marks;

/* Writes profile id's marks (windows as n (start, end) pairs). 0, or -1
 * with err. Nothing is written for a profile with neither. */
int xpv_store_compile_marks_put(sqlite3 *db, int64_t id, const int64_t *start, const int64_t *end,
                                size_t nwindows, const uint32_t *names, size_t nnames,
                                xpv_err *err);
/* Reads profile id's marks into out (empty when it has none). 0, or -1
 * with err (out then empty). */
int xpv_store_compile_marks_get(sqlite3 *db, int64_t id, xpv_store_compile_marks *out,
                                xpv_err *err);
/* 1 when the marks are empty (the profile compiled nothing in its capture). */
static inline int xpv_store_compile_marks_none(const xpv_store_compile_marks *m)
{
    return !m->nwindows && !m->nnames;
}
void xpv_store_compile_marks_free(xpv_store_compile_marks *m);

#endif
