/*
 * analysis.h — step timelines and kernel summaries, computed while a profile
 * is indexed (issue: "computed at index time, exact").
 *
 * The sink's analysis thread calls xpv_analysis_event() for every event as it
 * is stored; names are not available then (only interned ids), so anything
 * that depends on a name is resolved at finish (xpv_analysis_finish_begin,
 * then _end), which runs once, after the reader is done, and may also scan
 * the event store. Finish writes the profile's rows of `kernel_stats` and
 * `steps`.
 *
 * What the rows mean (details at the top of each file in this folder):
 *  - kernel_stats (kernel_stats.c, kernel_rows.c): per kind (kernel, memcpy,
 *    memset, xla_op, hlo_category), name and device, plus device -1 = all
 *    devices: exact ps count/total/min/max, exact median, sample stddev,
 *    percent of the same kind in the same device scope, launch shape when
 *    unique (else `shapes` = how many), the most frequent launching op.
 *  - steps (steps.c, step_breakdown.c): start_ps counts from the profile's
 *    start (profiles.start_ns); device work is assigned to steps through
 *    the correlation id of its host launch, else by its start; idle and
 *    host_ps come from unions of busy intervals clipped to the step.
 *  - warnings: which join was used, and any memory cap that was reached.
 */
#ifndef XPV_ANALYSIS_H
#define XPV_ANALYSIS_H

#include "analysis_input.h"
#include "collectives.h"
#include "../../store/xpv_event.h"
#include "../../common/xpv_common.h"
#include <sqlite3.h>

typedef struct xpv_analysis xpv_analysis;

typedef struct {
    char step_source[32]; /* annotation|profiler_step|steps_line|nvtx|tf|module|none */
    int64_t step_count;
    int64_t kernel_count; /* device kernel events (or XLA ops on TPU) */
    char warnings[1024];  /* newline-separated notes for the profile's warnings ("" none) */
} xpv_analysis_result;

xpv_analysis *xpv_analysis_new(void);
void xpv_analysis_event(xpv_analysis *a, const xpv_event *ev);
/* The reader will send no more device work (kernels, copies, memsets, XLA
 * ops): the kernel_stats rows may be computed now, on the thread that calls
 * xpv_analysis_event, with track_device[t] the device of track t (-1 none).
 * Finish writes them if nothing they depend on changed since. */
void xpv_analysis_device_work_done(xpv_analysis *a, const int *track_device, size_t ntracks);
/* Finish, in two halves: begin computes the steps and writes the
 * kernel_stats rows, and starts the step join beside the caller (when it
 * can run without SQLite; else it runs within begin); the caller may then
 * write rows of its own through in->db before end waits for the join and
 * writes the steps rows. `in`
 * (and what it points to) must stay valid until end returns. After a
 * failed begin nothing runs and end must not be called; after a
 * successful one, end (or xpv_analysis_free) must be. */
int xpv_analysis_finish_begin(xpv_analysis *a, const xpv_analysis_input *in, xpv_err *err);
int xpv_analysis_finish_end(xpv_analysis *a, xpv_analysis_result *out, xpv_err *err);
void xpv_analysis_free(xpv_analysis *a);

#endif
