/*
 * steps.h — the `steps` table (schema in index_db.c): one row per step of
 * a profile and device (device -1: all devices combined), the step's span
 * and its device time by category, in picoseconds from the profile's start.
 * The categories and idle partition the step's duration (step_breakdown.c).
 * Every query that reads the table is here (steps.c), as typed rows and the
 * few aggregates the answers need; nothing outside store/ names the table
 * in SQL (scripts/checksrc.sh).
 *
 * The rows are written by indexer/analysis/step_breakdown.c, which binds
 * its per-step accumulators straight into one statement prepared for the
 * analysis' transaction; that writer stays there.
 *
 * Invariant: a NULL column is unknown (its bit in `known` clear), never 0.
 */
#ifndef XPV_STORE_STEPS_H
#define XPV_STORE_STEPS_H

#include "cursor.h"

/* The time columns, in the table's order: bit i of known is ps[i]. */
enum {
    XPV_STORE_STEP_START,
    XPV_STORE_STEP_DURATION,
    XPV_STORE_STEP_COMPUTE,
    XPV_STORE_STEP_COLLECTIVE,
    XPV_STORE_STEP_MEMCPY_H2D,
    XPV_STORE_STEP_MEMCPY_D2H,
    XPV_STORE_STEP_MEMCPY_D2D,
    XPV_STORE_STEP_MEMCPY_OTHER,
    XPV_STORE_STEP_MEMSET,
    XPV_STORE_STEP_IDLE,
    XPV_STORE_STEP_HOST_WAIT,   /* idle, nothing launched (part of IDLE) */
    XPV_STORE_STEP_COMPILE,     /* host compile spans in the step (indexer/analysis/compile.c) */
    XPV_STORE_STEP_AUTOTUNE,    /* compile-time device work (autotuning) */
    XPV_STORE_STEP_KERNEL_WAIT, /* idle, work launched and not started (part of IDLE) */
    XPV_STORE_STEP_IDLE_OTHER,  /* idle where launches are unknown (part of IDLE) */
    XPV_STORE_STEP_OVERLAP_COMPUTE_COLLECTIVE, /* compute hidden under collectives */
    XPV_STORE_STEP_OVERLAP_COPY,               /* copies hidden under compute or collectives */
    XPV_STORE_STEP_NFIELDS
};

typedef struct {
    int64_t step;
    xpv_store_text name;
    int device;
    int64_t ps[XPV_STORE_STEP_NFIELDS];
    unsigned known;
    int slowest_device; /* combined row of devices with their own windows: the longest; else -1 */
    /* Where the step ends on the timeline: a combined row's latest end over
     * its devices' windows (past start + duration when the devices ran the
     * step at different times: the combined duration is their mean); a
     * device row's own end. The step's span is [start, span_end): the
     * combined start is the earliest device's. */
    int64_t span_end_ps;
} xpv_store_step;

static inline int xpv_store_step_known(const xpv_store_step *r, int field)
{
    return (r->known >> field) & 1u;
}
/* The four memcpy directions summed into *ps; 0 (unknown) when none is known. */
int xpv_store_step_memcpy(const xpv_store_step *r, int64_t *ps);

/* A profile's rows of one device, by step then start. */
int xpv_store_steps_open(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, int device,
                         xpv_err *err);
/* A profile's all-devices rows that have a start and a positive duration,
 * in time order (then by step): the steps as windows of the timeline. */
int xpv_store_steps_open_timed(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err);
/* The next row of either: 1 (row filled), 0 at the end, -1 with err. */
int xpv_store_steps_next(xpv_store_cursor *c, xpv_store_step *row, xpv_err *err);

/* The devices (>= 0) with rows, ascending; *devs malloc'ed. 0 or -1. */
int xpv_store_steps_devices(sqlite3 *db, int64_t profile_id, int **devs, size_t *n, xpv_err *err);
/* The step of device (-1: any) at ps: the first of the device's rows (by
 * start) whose window holds ps, else the first all-devices step whose span
 * [start, span_end) holds it. 1 with *step, 0 when none, -1 with err. */
int xpv_store_steps_at(sqlite3 *db, int64_t profile_id, int device, int64_t ps, int64_t *step,
                       xpv_err *err);

/* ---- over several profiles (the hosts of a run) ---- */

/* How many of the profiles have all-devices rows; -1 on error. */
int64_t xpv_store_steps_profiles_with_steps(sqlite3 *db, const int64_t *ids, size_t n,
                                            xpv_err *err);

/* Step time across hosts, a step lasting as long as its slowest host (all-
 * devices rows): how many steps, and their mean, shortest, longest and
 * standard deviation (over the steps, not a sample estimate). */
typedef struct {
    int64_t steps;
    double avg_ps, min_ps, max_ps, sd_ps;
} xpv_store_step_times;
int xpv_store_steps_times(sqlite3 *db, const int64_t *ids, size_t n, xpv_store_step_times *out,
                          xpv_err *err);

/* The all-devices rows (device = -1) summed: step time, the host compile
 * spans that kept the devices waiting (compile within host wait) and the
 * devices' compile-time work (autotuning), each unknown as 0. */
typedef struct {
    double duration_ps, compile_ps, autotune_ps;
} xpv_store_step_compile;
int xpv_store_steps_compile(sqlite3 *db, const int64_t *ids, size_t n, xpv_store_step_compile *out,
                            xpv_err *err);

/* The per-device rows (device >= 0) summed: distinct steps, distinct
 * (profile, device) pairs, and each time column's sum (unknown as 0). */
typedef struct {
    int64_t steps, devices;
    double duration_ps, idle_ps, compute_ps, collective_ps, memcpy_ps, memset_ps, autotune_ps;
} xpv_store_step_sums;
int xpv_store_steps_device_sums(sqlite3 *db, const int64_t *ids, size_t n, xpv_store_step_sums *out,
                                xpv_err *err);

/* Per step number, the mean of each column over the rows of that step:
 * the per-device rows when any profile has them, else the all-devices rows. */
enum {
    XPV_STORE_STEP_AVG_DURATION,
    XPV_STORE_STEP_AVG_COMPUTE,
    XPV_STORE_STEP_AVG_COLLECTIVE,
    XPV_STORE_STEP_AVG_MEMCPY,
    XPV_STORE_STEP_AVG_MEMSET,
    XPV_STORE_STEP_AVG_IDLE,
    XPV_STORE_STEP_AVG_HOST_WAIT,
    XPV_STORE_STEP_AVG_NFIELDS
};
typedef struct {
    int64_t step, rows;
    double avg_ps[XPV_STORE_STEP_AVG_NFIELDS];
    unsigned known; /* bit i: avg_ps[i] (no row knows it: clear) */
} xpv_store_step_avg;
int xpv_store_steps_open_averages(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids, size_t n,
                                  xpv_err *err);
int xpv_store_steps_averages_next(xpv_store_cursor *c, xpv_store_step_avg *row, xpv_err *err);

/* Per (step, host) of the all-devices rows, by step then host: the step's
 * times, whether the host was the slowest of that step (and not every host
 * as slow), and how far behind the fastest host it was. */
enum {
    XPV_STORE_STEP_HOST_DURATION,
    XPV_STORE_STEP_HOST_COMPUTE,
    XPV_STORE_STEP_HOST_COLLECTIVE,
    XPV_STORE_STEP_HOST_MEMCPY,
    XPV_STORE_STEP_HOST_IDLE,
    XPV_STORE_STEP_HOST_BEHIND,
    XPV_STORE_STEP_HOST_NFIELDS
};
typedef struct {
    int64_t step;
    xpv_store_text host;
    int64_t ps[XPV_STORE_STEP_HOST_NFIELDS];
    unsigned known;
    int slowest;
} xpv_store_step_host;
int xpv_store_steps_open_hosts(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids, size_t n,
                               xpv_err *err);
int xpv_store_steps_hosts_next(xpv_store_cursor *c, xpv_store_step_host *row, xpv_err *err);

/* The host slowest on the most steps (ties: by name), into host (cut to
 * fit), with how many steps it was slowest on and how many it ran: 1, 0
 * when no host was ever the slowest, -1 with err. */
int xpv_store_steps_slowest_host(sqlite3 *db, const int64_t *ids, size_t n, char *host,
                                 size_t hostsz, int64_t *slow, int64_t *steps, xpv_err *err);

#endif
