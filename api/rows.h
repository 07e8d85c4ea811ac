/*
 * rows.h — the steps and kernel_stats rows as C values, for answers that
 * combine two profiles (compare.c) rather than print one. The loaders read
 * through the same store cursors as the /steps and /kernels answers
 * (store/steps.c, store/kernel_stats.c), so both read the tables one way.
 *
 * Invariant: times stay integer picoseconds; a NULL column is "unknown"
 * (its known bit or flag clear), never 0.
 */
#ifndef XPV_API_ROWS_H
#define XPV_API_ROWS_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

/* The step categories, in the order of the /steps answer. */
enum {
    XPV_STEP_COMPUTE,
    XPV_STEP_COLLECTIVE,
    XPV_STEP_MEMCPY,
    XPV_STEP_MEMSET,
    XPV_STEP_IDLE,
    XPV_STEP_HOST_WAIT, /* the parts of idle */
    XPV_STEP_KERNEL_WAIT,
    XPV_STEP_IDLE_OTHER,
    XPV_STEP_NPARTS
};

typedef struct {
    int64_t step;
    int has_duration;
    int64_t duration_ps;
    int64_t part_ps[XPV_STEP_NPARTS];
    unsigned part_known; /* bit i: part_ps[i] is known */
    int64_t compile_ps;  /* host compile spans in the step (0: none, or unknown) */
    int64_t autotune_ps; /* compile-time device work (autotuning) in the step */
} xpv_api_step_row;

/* The steps of one device (-1: all combined) in step order; *rows is
 * malloc'ed (NULL when none). Returns 0, or -1 with err. */
int xpv_api_step_rows(sqlite3 *db, int64_t id, int device, xpv_api_step_row **rows, size_t *n,
                      xpv_err *err);

typedef struct {
    char *name;
    int64_t count;
    int has_total;
    int64_t total_ps;
} xpv_api_kernel_row;

/* The kernel_stats rows of one kind and device, sorted by name, one per
 * name (rows that share a name are summed). Returns 0, or -1 with err. */
int xpv_api_kernel_rows(sqlite3 *db, int64_t id, const char *kind, int device,
                        xpv_api_kernel_row **rows, size_t *n, xpv_err *err);
void xpv_api_kernel_rows_free(xpv_api_kernel_row *rows, size_t n);

#endif
