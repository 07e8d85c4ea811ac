/*
 * findings_internal.h — what the findings' parts share: the measurements
 * collected from one profile (findings_scan.c), the finding list they turn
 * into (finding_build.c, filled by findings_detect.c, findings_device.c,
 * findings_rows.c) and its JSON (findings.c).
 *
 * Times are integer picoseconds from the profile's start (the steps table's
 * clock) until they are written; evidence is written in the events
 * answer's clock (absolute µs), so a window or a ref opens the timeline.
 */
#ifndef XPV_FINDINGS_INTERNAL_H
#define XPV_FINDINGS_INTERNAL_H

#include "findings_config.h"
#include "../tools/tool_ops.h"
#include "../tools/tools.h"
#include "../api_util.h"
#include <sqlite3.h>

/* Name classes (a bit set per interned string id). */
enum {
    XPV_FN_COLLECTIVE = 1,
    XPV_FN_COMPILE = 2,
    XPV_FN_INPUT = 4, /* host input work: data loaders, tf.data, next */
    XPV_FN_FEED = 8,  /* device infeed/outfeed */
    XPV_FN_SYNC_COPY = 16,
    XPV_FN_PAGEABLE = 32,
    XPV_FN_GRAPH_LAUNCH = 64, /* cudaGraphLaunch, cuGraphLaunch, XLA command buffer execution */
};

enum { XPV_SEV_INFO = 0, XPV_SEV_WARNING = 1, XPV_SEV_CRITICAL = 2 };

#define XPV_FPAGEABLE_NAMES 4

/* An event of the store, for evidence. */
typedef struct {
    int set;
    int64_t block;
    uint32_t index;
    int64_t start, end; /* ps from the profile start */
} xpv_fref;

/* Keeps r if [start, end) is longer than what it holds. */
void xpv_fref_longest(xpv_fref *r, int64_t start, int64_t end, int64_t block, uint32_t index);

/* One device's own window of a step the devices ran at different times. */
typedef struct {
    int dev;
    int64_t start, end;
} xpv_fdevwin;

/* A step (or, without steps, a slice of the profile) and what happened
 * in it. Sums over devices are of each device's own union of intervals.
 * [start, end) is the steps table's combined row (with per-device windows:
 * the earliest start and the mean duration); each device is measured in
 * its own window, c->dw[dw_at, dw_at + ndw) when the devices ran the step
 * at different times (ndw 0: every device in [start, end)), and its events
 * are read up to span_end, the latest device's end (>= end). The host's
 * figures (input wait, compile, synchronous copies, host wait) cover the
 * time some device ran the step, host_len long: [start, end), or the union
 * of the device windows, never [start, end) of a step the devices ran
 * apart, which no device need have run; their evidence spans
 * [start, span_end). */
typedef struct {
    int64_t step; /* -1: a slice of a profile without steps */
    int64_t start, end, span_end;
    size_t dw_at, ndw;
    int64_t dev_window; /* (end - start) x the devices with work in it */
    int64_t busy;       /* sum over devices of their busy time */
    int64_t collective; /* sum over devices of their collective time */
    int64_t exposed;    /* ... of collective time no compute overlaps */
    int64_t h2d, d2h;   /* copy time, of the copies starting in the window */
    int64_t h2d_bytes, d2h_bytes;
    int has_bytes;
    int64_t kernels, short_kernels, kernel_time;
    int64_t active, idle_in_active, gaps; /* from each device's first to last work; without
                                             steps, with the gaps between slices */
    int64_t host_len;                     /* the time the host figures cover (host_parts) */
    int64_t input_wait;                   /* the devices wait for host input work */
    int64_t compile;                      /* compilation (host) inside the window */
    /* CUDA graphs (a launch whose id several kernels share, or named a
     * graph launch): each one launch, however many kernels it ran */
    int64_t graph_launches, graph_kernels;
    int64_t units, short_units, unit_time; /* launches: kernels outside graphs, and graphs */
    int64_t launch_idle, launch_gaps;      /* idle_in_active and gaps outside graph executions */
    int64_t host_wait; /* with graphs: no device works and no graph runs (window time) */
    int64_t step_compile, autotune; /* steps table: compile_ps, autotune_ps (ps) */
    int has_step_compile;
    int64_t sync_copies;
    int64_t cat[6]; /* steps table: compute, collective, memcpy, memset, idle, host (ps) */
    int has_cat[6];
    xpv_fref exposed_ev, copy_ev, sync_ev, idle_ev, input_ev;
} xpv_fwindow;

typedef struct {
    int64_t start, end;
    xpv_fref ref;
    char module[128]; /* "" when the profile does not say which */
} xpv_fcompile;

#define XPV_FHOT 3

/* Everything the detectors read. */
typedef struct {
    sqlite3 *db;
    int64_t id;
    const xpv_findings_config *cfg;
    xpv_tool_profile prof;
    int *track_device; /* by track id, -1: host */
    size_t ntracks;
    uint8_t *cls; /* name class by string id */
    size_t ncls;
    int64_t span; /* ps, the profile's length */
    int has_steps;
    xpv_fwindow *win;
    size_t nwin;
    xpv_fdevwin *dw; /* the windows' own device windows, by window then device */
    size_t ndw;
    int truncated;     /* a window had more device events than kept */
    int64_t *dev_last; /* by device: the end of its last work in the windows so far, -1 none */
    size_t ndev;
    /* host */
    xpv_fcompile *compiles;
    size_t ncompiles;
    xpv_tool_ival *input; /* host input work, normalized */
    size_t ninput;
    xpv_tool_ival *compile_ivals; /* normalized */
    size_t ncompile_ivals;
    int64_t *sync_t; /* sync copy starts, sorted */
    xpv_fref *sync_ref;
    size_t nsync;
    /* device */
    int64_t *latency; /* launch -> device start, ps (a graph: to its first kernel) */
    size_t nlatency, latency_cap;
    int64_t latency_seen;
    int64_t *graph_latency; /* graph launch -> its first kernel, ps */
    size_t ngraph_latency, graph_latency_cap;
    /* the host's time between graph launches (findings_host.c) */
    xpv_tool_ival *host_gaps; /* windows' host_wait intervals, in time order */
    size_t nhost_gaps, host_gaps_cap;
    struct xpv_fblame *blame; /* host work in those gaps by name, most first */
    size_t nblame;
    int64_t pageable_n, pageable_time;
    xpv_fref pageable_ev;
    /* the pageable copies' names (Kineto's "Memcpy HtoD (Pageable ->
     * Device)"), the first XPV_FPAGEABLE_NAMES of the profile's strings:
     * which the copies used (bits), which the longest (-1: another) */
    uint32_t pageable_id[XPV_FPAGEABLE_NAMES];
    char pageable_text[XPV_FPAGEABLE_NAMES][80];
    int npageable_names, pageable_longest;
    unsigned pageable_used;
    uint32_t hot_name[XPV_FHOT];
    char hot_label[XPV_FHOT][200];
    int64_t hot_ps[XPV_FHOT];
    int nhot;
    int64_t hot_total;
    xpv_fref hot_ev[XPV_FHOT];
    /* byte-count arg keys (string ids, 0 none) */
    uint32_t key_bytes[3], key_memcpy_details;
} xpv_fctx;

/* ---- reading the windows (findings_batch.c) and measuring them
 * (findings_window.c) ---- */

typedef struct {
    int32_t dev;
    uint8_t cls, kind;
    uint32_t name, index;
    int64_t s, e, corr, block;
} xpv_fitem;

typedef struct {
    int64_t corr, t;
    int graph; /* its name says graph launch */
} xpv_flaunch;

/* A device event with a correlation id, for grouping by id. */
typedef struct {
    int64_t corr, s, e;
    int kernel;
} xpv_fcorr;

/* Host work named `name` overlapped the host gaps for `ps` in all; ref is
 * its occurrence that overlapped them most. */
typedef struct xpv_fblame {
    uint32_t name;
    int64_t ps, n;
    xpv_fref ref;
    int64_t ref_ps;
} xpv_fblame;

typedef struct {
    xpv_tool_ival *v;
    size_t n, cap;
} xpv_fivals;

typedef struct {
    xpv_fctx *c;
    int64_t b0, b1; /* the span being read, ps */
    xpv_fitem *items, *by_dev;
    size_t n, cap, by_dev_cap;
    xpv_flaunch *l; /* the span's launches, by correlation id */
    size_t nl, lcap;
    size_t *grp;       /* by_dev[grp[i], grp[i + 1]) is one device's */
    int64_t *grp_long; /* the longest event of each device group */
    size_t ngrp, grp_cap;
    xpv_fivals comp, coll, busy, all, feed, graph, gall, parts; /* scratch */
    xpv_fcorr *cg; /* one device's events with an id, grouped */
    size_t ncg, cg_cap;
} xpv_fscan;

/* Adds one device's work to window w, the device's part of it being
 * [w0, w1): v[0..n) all start before w1 (those that end before w0 are
 * skipped). */
void xpv_findings_window_device(xpv_fscan *ws, xpv_fwindow *w, int64_t w0, int64_t w1,
                                const xpv_fitem *v, size_t n);
/* After every device: the wait for input, compilation and sync copies. */
void xpv_findings_window_end(xpv_fscan *ws, xpv_fwindow *w);

/* ---- findings_scan.c ---- */
int xpv_findings_classify_names(xpv_fctx *c, xpv_err *err);
int xpv_findings_scan_host(xpv_fctx *c, xpv_err *err);
int xpv_findings_scan_windows(xpv_fctx *c, xpv_err *err);
/* The device windows of the steps whose span_end passes their end. */
int xpv_findings_load_device_windows(xpv_fctx *c, xpv_err *err);
/* Adds a gap between graph launches that the host spent (findings_host.c). */
void xpv_findings_host_gap(xpv_fctx *c, int64_t start, int64_t end);
/* Blames the host gaps on the outermost host work in them (findings_host.c). */
int xpv_findings_blame_host(xpv_fctx *c, xpv_err *err);
uint8_t xpv_findings_name_class(const char *s, size_t n);

/* ---- the finding list (finding_build.c) ---- */
#define XPV_FMAX_EVIDENCE 8
typedef struct {
    int64_t start, end; /* ps from the profile start */
    int has_ref;
    int64_t block;
    uint32_t index;
    char label[200];
} xpv_fevidence;

typedef struct {
    const char *kind, *unit;
    int severity;
    double value, threshold;
    char title[240];
    char explanation[640];
    xpv_fevidence ev[XPV_FMAX_EVIDENCE];
    size_t nev;
} xpv_finding;

typedef struct {
    xpv_finding *v;
    size_t n, cap;
} xpv_findings;

xpv_finding *xpv_findings_add(xpv_findings *l, const char *kind, int severity, double value,
                              const char *unit, double threshold);
void xpv_finding_title(xpv_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xpv_finding_explain(xpv_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Evidence: a window, and the event r names when set. */
void xpv_finding_evidence(xpv_finding *f, int64_t start, int64_t end, const xpv_fref *r,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- detectors ---- */
void xpv_findings_compile(const xpv_fctx *c, xpv_findings *out);
void xpv_findings_input(const xpv_fctx *c, xpv_findings *out);
void xpv_findings_collectives(const xpv_fctx *c, xpv_findings *out);
void xpv_findings_transfers(const xpv_fctx *c, xpv_findings *out);
void xpv_findings_launch(xpv_fctx *c, xpv_findings *out);
/* 1 when CUDA graphs ran at least half of w's kernels (findings_device.c) */
int xpv_findings_graph_run(const xpv_fwindow *w);
/* With CUDA graphs: the gaps between graph launches, and what the host did */
void xpv_findings_host(xpv_fctx *c, xpv_findings *out);
/* " Launch to start ...: median, 90th percentile, max." of v (sorted here) */
void xpv_findings_latency_text(int64_t *v, size_t n, int partial, const char *what, char *buf,
                               size_t len);
/* findings_rows.c: from the steps and kernel_stats tables */
int xpv_findings_hot_names(xpv_fctx *c, xpv_err *err);
int xpv_findings_step_outliers(const xpv_fctx *c, xpv_findings *out, xpv_err *err);
void xpv_findings_hot_spots(const xpv_fctx *c, xpv_findings *out);
int xpv_findings_idle_devices(const xpv_fctx *c, xpv_findings *out, xpv_err *err);

/* The device time shares are of: with steps, each step's length times the
 * devices that worked in it; without, each device's span from its first
 * work to its last. */
int64_t xpv_findings_device_time(const xpv_fctx *c);

/* Indexes of the (at most k) windows with the largest positive key,
 * largest first; returns how many. */
size_t xpv_findings_top_windows(const xpv_fctx *c, int64_t (*key)(const xpv_fwindow *), size_t *out,
                                size_t k);

/* "12.3 ms" style text of a ps duration, into buf. */
const char *xpv_findings_dur(int64_t ps, char *buf, size_t n);

/* ---- the answer, and the one kept in the index (findings_keep.c) ---- */

/* Whether a profile in state ps has events to judge (ok, or read in part). */
int xpv_findings_indexed(const xpv_api_profile_state *ps);
/* Computes profile id's answer after its head (`,"complete":...}`) into
 * out: 0, or -1 with err. */
int xpv_findings_body(sqlite3 *db, int64_t id, const xpv_findings_config *cfg,
                      const xpv_api_profile_state *ps, xpv_buf *out, xpv_err *err);
/* The key an answer for cfg is kept under by a program with this build id
 * (build_n bytes): 1 with *key, or 0 when build_n is 0 (no build id: two
 * builds could not be told apart, so nothing is kept or read). */
int xpv_findings_key(const xpv_findings_config *cfg, const unsigned char *build, size_t build_n,
                     uint64_t *key);
/* Appends the answer after its head as kept for cfg and the profile as ps
 * describes it: 1, 0 when none is kept (or the store is off, or the
 * program has no build id), -1 with err. */
int xpv_findings_stored(sqlite3 *db, int64_t id, const xpv_findings_config *cfg,
                        const xpv_api_profile_state *ps, xpv_buf *out, xpv_err *err);

#endif
