/*
 * analysis_input.h — what finish is given about the profile (analysis.h):
 * its tracks, their names and devices, and the interned strings. Apart
 * from analysis.h because the passes read it too (analysis_internal.h),
 * and they sit below the entry points that run them.
 */
#ifndef XPV_ANALYSIS_INPUT_H
#define XPV_ANALYSIS_INPUT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct xpv_store_kernel_rows;

typedef struct {
    uint32_t id;
    int64_t pid, tid;
    const char *process_name; /* never NULL ("" when unnamed) */
    const char *thread_name;  /* never NULL */
    int device_id;            /* device ordinal, -1 for host tracks */
    int64_t events;
} xpv_track_info;

typedef struct {
    sqlite3 *db;
    int64_t profile_id;
    /* Interned string lookup; returns "" for unknown ids. The text stays
     * valid (and unchanged) until finish returns. */
    const char *(*string)(void *ctx, uint32_t id, size_t *len);
    void *string_ctx;
    const xpv_track_info *tracks; /* indexed by track id */
    size_t ntracks;
    const char *producer; /* "JAX/XLA", "PyTorch", "TensorFlow", "Nsight Systems", "unknown" */
    const struct xpv_capture *capture; /* callers leave NULL; finish sets its own */
    const struct xpv_spans *spans;     /* the same: the CPU op candidates (capture.c) */
    /* NULL: kernel_stats rows are inserted into db; else gathered here for
     * the index's writer (a worker's part, index_jobs.c). */
    struct xpv_store_kernel_rows *kernel_rows;
} xpv_analysis_input;

#endif
