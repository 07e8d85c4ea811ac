/*
 * analysis_internal.h — the pieces the analysis is built from, shared by the
 * files of indexer/analysis/ and by nothing else:
 *
 *   capture.c        compact in-memory copy of the events finish scans again
 *                    and of the host spans the op links read, and the reads
 *                    of the input: xpv_analysis_scan (the capture when it
 *                    covers a query, else the store) and
 *                    xpv_analysis_string_is
 *   intervals.c      int64 sorting and selection, and the union of
 *                    [start, end) intervals
 *   durations.c      every duration of every group, kept in memory up to a
 *                    cap and spilled to an unlinked temp file beyond it
 *   collectives.c    which kernel / op names are collectives
 *   kernel_stats.c   the groups of device work by (kind, name, track) while
 *                    events stream in; at finish their CPU ops through
 *                    correlation (PyTorch) and the hlo_category groups
 *   compile.c        compilation inside the capture: the host compile
 *                    spans and which device work ran for them (autotuning)
 *   compile_split.c  that work moved out of the program's kernel groups
 *   kernel_rows.c    the groups turned into kernel_stats rows: which are
 *                    collectives, the rows' numbers, their names and insert
 *   launches.c       host launches by correlation id, and the CPU op around
 *                    each
 *   steps.c          step markers, marker preference, module fallback, and
 *                    finding the step at a time
 *   step_breakdown.c per-step device time split and idle (table steps)
 *   analysis.c       the public entry points: routes events, runs finish
 *
 * Times: event starts are integer ns of the source clock (often ns since the
 * Unix epoch, which overflows int64 when multiplied by 1000), durations
 * exact ps. Inside the analysis every time is ps from the profile's start:
 * t_ps = (ts_ns - base_ns) * 1000, base_ns = the earliest event start, which
 * is also profiles.start_ns.
 */
#ifndef XPV_ANALYSIS_INTERNAL_H
#define XPV_ANALYSIS_INTERNAL_H

#include "analysis_input.h"
#include "../../common/xpv_hindex.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/event_store.h"

#include <stdio.h>

/* Arrays indexed by a string id (name -> group, shape key -> shape, name ->
 * collective) cover ids below this, 4 M (16 MB of uint32 at most each);
 * larger ids fall back to a hash map. String ids are dense, so in practice
 * every id is covered. */
#define XPV_BY_STRING_MAX (1u << 22)

/* ---- capture.c ---- */

/* The kinds the capture keeps: what finish scans without args. */
#define XPV_CAPTURE_KINDS                                                                          \
    (XPV_KIND_DEVICE_WORK_BITS | XPV_KIND_BIT(XPV_KIND_XLA_OP) |                                   \
     XPV_KIND_BIT(XPV_KIND_XLA_MODULE) | XPV_KIND_BIT(XPV_KIND_LAUNCH))

typedef struct {
    size_t offset;              /* of the first event in the track's bytes */
    uint32_t n;                 /* events */
    int64_t prev_ts, prev_corr; /* delta bases before the first event */
    int64_t t_min, t_max;       /* earliest start, latest end (ns) */
} xpv_capture_seg;

typedef struct {
    unsigned char *buf;
    size_t len, cap;
    xpv_capture_seg *seg;
    size_t nseg, cap_seg;
    int64_t prev_ts, prev_corr;
} xpv_capture_track;

typedef struct xpv_capture {
    xpv_capture_track *t;
    size_t ntracks;
    size_t bytes, limit; /* allocated, and the most it may allocate */
    int overflowed;      /* past the limit: holds nothing, covers nothing */
} xpv_capture;

void xpv_capture_init(xpv_capture *c, size_t limit);
void xpv_capture_add(xpv_capture *c, const xpv_event *ev);
void xpv_capture_free(xpv_capture *c);
/* 1 when the capture can answer q exactly as the store would. */
int xpv_capture_covers(const xpv_capture *c, const xpv_store_query *q);
/* Like xpv_store_scan over the capture (block_id -1); needs covers(q). */
int xpv_capture_scan(const xpv_capture *c, const xpv_store_query *q, xpv_store_visit fn, void *ctx);
/* xpv_capture_scan over part `part` of `nparts` of each track's segments,
 * the earliest in part 0: for one scan shared by threads. */
int xpv_capture_scan_part(const xpv_capture *c, const xpv_store_query *q, unsigned part,
                          unsigned nparts, xpv_store_visit fn, void *ctx);
/* Events the capture holds for track t. */
uint64_t xpv_capture_events(const xpv_capture *c, size_t t);
/* The spans of host events with a category and a duration (of kind OTHER,
 * or LAUNCH without an id): what launches.c reads for the CPU ops around
 * launches, kept per track in arrival order (zigzag(ts - previous ts),
 * varint(dur_ns), varint(name), varint(cat), ~8 bytes each) so that the op
 * links need no decode of the event store's host blocks. Like the capture,
 * it holds all of them or, past its limit, none (overflowed). */
typedef struct {
    unsigned char *buf;
    size_t len, cap;
    int64_t prev_ts;
} xpv_span_track;

typedef struct xpv_spans {
    xpv_span_track *t;
    size_t ntracks;
    size_t bytes, limit;
    int overflowed;
} xpv_spans;

static inline int xpv_spans_wants(const xpv_event *ev)
{
    return ev->cat && ev->dur_ns > 0 &&
           (ev->kind == XPV_KIND_OTHER || (ev->kind == XPV_KIND_LAUNCH && ev->corr < 0));
}
void xpv_spans_init(xpv_spans *s, size_t limit);
/* Keeps ev, which xpv_spans_wants (asked inline on the caller's hot path). */
void xpv_spans_add(xpv_spans *s, const xpv_event *ev);
void xpv_spans_free(xpv_spans *s);
/* Visits the spans of one track in arrival order (kind OTHER, block_id -1);
 * needs !overflowed. */
int xpv_spans_scan(const xpv_spans *s, uint32_t track, xpv_store_visit fn, void *ctx);
/* The scan finish uses: the capture when it covers q, else the store. */
int xpv_analysis_scan(const xpv_analysis_input *in, const xpv_store_query *q, xpv_store_visit fn,
                      void *ctx, xpv_err *err);
/* Whether string `id` of in is one of `names` (NULL-ended): each id is read
 * once, its answer kept in memo (id -> 0 or 1), as arg keys and categories
 * repeat on every event. */
int xpv_analysis_string_is(const xpv_analysis_input *in, xpv_hindex *memo, uint32_t id,
                           const char *const *names);

/* ---- intervals.c ---- */

typedef struct {
    int64_t start, end; /* ps, end exclusive */
} xpv_ival;

typedef struct {
    xpv_ival *v;
    size_t n, cap;
} xpv_ivals;

void xpv_sort_i64(int64_t *v, size_t n);
/* Reorders v so that v[k] is the k-th smallest, v[<k] <= v[k] <= v[>k]. */
void xpv_select_i64(int64_t *v, size_t n, size_t k);
void xpv_ivals_push(xpv_ivals *iv, int64_t start, int64_t end);
/* For a list read only through its union: [start, end) extends the last
 * interval when it starts inside it or where it ends (the union is the
 * same, the starts stay in the order they came), else is pushed. Returns 1
 * when it took a new slot. */
int xpv_ivals_add(xpv_ivals *iv, int64_t start, int64_t end);
/* Sorts and merges iv in place into disjoint intervals; returns their total
 * length. scratch (may be NULL) is working space kept across calls, so
 * many unions in a row do not allocate and fault in a buffer each. */
int64_t xpv_ivals_union(xpv_ivals *iv, xpv_ivals *scratch);
/* Of two unions (sorted, disjoint): the length of their intersection, and
 * their union into dst (neither a nor b). */
int64_t xpv_ivals_overlap(const xpv_ivals *a, const xpv_ivals *b);
void xpv_ivals_merge(xpv_ivals *dst, const xpv_ivals *a, const xpv_ivals *b);
void xpv_ivals_free(xpv_ivals *iv);

/* ---- durations.c ---- */

/* The in-memory part of one group's durations. */
typedef struct {
    int64_t *v;
    uint32_t n, cap;
} xpv_dur_list;

typedef struct {
    size_t mem_bytes, mem_cap;
    FILE *spill; /* records: u32 group, i64 duration (little-endian host order) */
    int64_t nspilled;
    int spill_failed; /* tmpfile() failed: everything stays in memory */
} xpv_durs;

void xpv_durs_init(xpv_durs *d, size_t mem_cap);
void xpv_durs_add(xpv_durs *d, xpv_dur_list *l, uint32_t group, int64_t v);
/* Reads every spilled record back, calling fn(ctx, group, value). */
int xpv_durs_replay(xpv_durs *d, void (*fn)(void *ctx, uint32_t group, int64_t v), void *ctx,
                    xpv_err *err);
void xpv_durs_free(xpv_durs *d);

/* ---- kernel_stats.c ---- */

#define XPV_KS_HLO_CATEGORY XPV_KIND_COUNT /* pseudo kind for hlo_category groups */

typedef struct {
    int32_t grid[3], block[3];
    int32_t registers;
    int64_t shared_bytes; /* static + dynamic, -1 unknown */
} xpv_shape;

typedef struct {
    uint32_t op;
    int64_t n;
} xpv_op_tally;

#define XPV_KS_MAX_OPS 4
#define XPV_KS_MAX_SHAPES 256

typedef struct {
    /* what every streamed event of the group touches comes first */
    uint8_t kind; /* enum xpv_kind, or XPV_KS_HLO_CATEGORY */
    uint8_t ops_from_reader;
    uint8_t dropped;    /* not summarised (XLA ops of a line that is not `XLA Ops`) */
    uint8_t collective; /* set by xpv_kstats_classify */
    uint32_t name, track;
    uint32_t next;       /* the group that followed this one on its track last time */
    uint32_t last_shape; /* shape id of the latest instance (UINT32_MAX none): most repeat it */
    int64_t count, total_ps;
    xpv_dur_list durs;
    double occ_sum;
    int64_t occ_n;
    xpv_op_tally ops[XPV_KS_MAX_OPS];
    /* the rest only when something changes, and at finish */
    uint32_t *shapes; /* distinct shape ids */
    uint32_t nshapes;
    int64_t fill; /* finish: values gathered so far */
    int64_t *dst; /* finish: where its values go */
} xpv_kgroup;

typedef struct {
    xpv_kgroup *g;
    size_t n, cap;
    xpv_hindex index;        /* group key -> index */
    uint32_t *last_on_track; /* track -> group of its latest event (UINT32_MAX none) */
    size_t ntracks;
    uint32_t *by_name; /* name id -> the group it was last found in (UINT32_MAX none) */
    size_t nby_name;
    uint32_t *by_shape_key; /* launch shape key -> shape id (UINT32_MAX unseen) */
    size_t nby_shape_key;
    xpv_shape *shapes;
    uint32_t *shape_group; /* per shape: the group that saw it last (cuts pair lookups) */
    size_t nshapes, cap_shapes;
    xpv_hindex shape_index;  /* hash of shape -> id */
    xpv_hindex group_shapes; /* group << 32 | shape id: the shapes each group has seen */
    xpv_durs durs;
    char **cat_names; /* hlo_category values (name ids of XPV_KS_HLO_CATEGORY groups) */
    size_t ncat;
    xpv_hindex cat_index;
    uint64_t version; /* bumped by every change a kernel_stats row can see */
} xpv_kstats;

void xpv_kstats_init(xpv_kstats *k, size_t mem_cap);
void xpv_kstats_add(xpv_kstats *k, const xpv_event *ev);
/* Leaves out the groups of `kind` on tracks not marked in keep_tracks. */
void xpv_kstats_keep_tracks(xpv_kstats *k, unsigned kind, const uint8_t *keep_tracks);
void xpv_kstats_free(xpv_kstats *k);
/* The group of (kind, name, track); with add, created when missing, else
 * UINT32_MAX when missing. */
uint32_t xpv_kstats_group(xpv_kstats *k, unsigned kind, uint32_t name, uint32_t track, int add);
/* Adds one instance to group gi (ev's duration and, for kernels, launch). */
void xpv_kstats_add_to(xpv_kstats *k, uint32_t gi, const xpv_event *ev);
/* Gives group gi another kind (its key follows). */
void xpv_kstats_rekey(xpv_kstats *k, uint32_t gi, unsigned kind);
/* Drops group gi and puts an empty group with its key in its place;
 * returns the new group. */
uint32_t xpv_kstats_renew(xpv_kstats *k, uint32_t gi);

struct xpv_launches;
/* Adds the CPU op found through correlation to kernel groups whose reader
 * gave no op (PyTorch). Scans the kernel tracks. */
int xpv_kstats_link_ops(xpv_kstats *k, const xpv_analysis_input *in, const uint8_t *kernel_tracks,
                        const struct xpv_launches *l, xpv_err *err);
/* Groups the XLA_OP events of the marked tracks by their `hlo_category` arg. */
int xpv_kstats_hlo_categories(xpv_kstats *k, const xpv_analysis_input *in,
                              const uint8_t *xla_op_tracks, xpv_err *err);

/* ---- compile.c ---- */

/* The kind bit of kernel_stats groups of compile-time device work (kinds
 * below it are enum xpv_kind, or XPV_KS_HLO_CATEGORY). */
#define XPV_KS_COMPILE 0x20u

typedef struct {
    int64_t ts_ns;
    uint32_t track, name;
    uint8_t kind;
} xpv_compile_ev;

typedef struct xpv_compile {
    xpv_ivals windows;  /* the union of host compile spans, ns of the source clock */
    int64_t window_ns;  /* their total */
    xpv_compile_ev *ev; /* compile-time device events inside them, sorted */
    size_t nev, cap;
    int64_t dropped;  /* past the cap: counted as the program's */
    xpv_hindex tuner; /* kernel name id -> 1: an XLA autotuner kernel */
} xpv_compile;

/* 1 when a kernel name is one of XLA's autotuner kernels. */
int xpv_compile_kernel_name(const char *s, size_t len);
/* Finds the compile windows (host tracks of in) and the compile-time
 * events of the marked device tracks, with the autotuner kernel names
 * among k's groups. Reads the store (the capture holds no host spans). */
int xpv_compile_find(xpv_compile *c, const xpv_analysis_input *in, const xpv_kstats *k,
                     const uint8_t *device_tracks, xpv_err *err);
/* 1 when device event ev is compile-time work. Read-only: any thread. */
int xpv_compile_is(const xpv_compile *c, const xpv_event *ev);
/* The ps of [start_ps, end_ps) (from base_ns) that compile windows cover. */
int64_t xpv_compile_overlap_ps(const xpv_compile *c, int64_t base_ns, int64_t start_ps,
                               int64_t end_ps);
void xpv_compile_free(xpv_compile *c);
/* Keeps c's windows and autotuner kernel names in the index (when in has
 * one) for the readers that apply the same rule later. 0, or -1 with err. */
int xpv_compile_write(const xpv_compile *c, const xpv_analysis_input *in, xpv_err *err);
/* Moves compile-time instances out of k's groups into groups of kind
 * XPV_KS_COMPILE | kind: whole groups when all their instances are, else
 * the group is rebuilt from a store scan of its track (launch shapes from
 * the kernel_details, occupancy and op args). */
int xpv_kstats_split_compile(xpv_kstats *k, const xpv_analysis_input *in, const xpv_compile *c,
                             xpv_err *err);

/* ---- kernel_rows.c ---- */

/* One kernel_stats row, all but its text. */
typedef struct {
    uint32_t gi;    /* the first group of its (kind, name) unit */
    int32_t device; /* -1: over all devices */
    int64_t count, total, min, max;
    double median, stddev;
    double percent;          /* of its family's total in its device scope; < 0 when that is 0 */
    uint32_t op;             /* the most frequent launching op (string id), 0 none */
    uint32_t shape, nshapes; /* the shape id when nshapes == 1 */
    double occupancy;        /* mean over the instances that report one, < 0 none */
} xpv_krow;

typedef struct {
    xpv_krow *v;
    size_t n, cap;
    uint64_t version; /* the xpv_kstats version they were computed from */
} xpv_krows;

/* Computes every row from the groups (track_device[t]: the device of track
 * t, -1 for none; tracks from ntracks on have none). Touches neither SQLite
 * nor strings, and leaves the groups' durations in place. */
int xpv_kstats_rows(xpv_kstats *k, const int *track_device, size_t ntracks, xpv_krows *out,
                    xpv_err *err);
/* Marks the groups of collective kernels / XLA ops / hlo categories and puts
 * their keys (kind << 32 | name) into `collective`; before xpv_kstats_insert,
 * after the ops and hlo categories are known. */
void xpv_kstats_classify(xpv_kstats *k, const xpv_analysis_input *in, xpv_hindex *collective);
/* Writes rows computed from the groups as they are now, after xpv_kstats_classify. */
int xpv_kstats_insert(const xpv_kstats *k, const xpv_krows *rows, const xpv_analysis_input *in,
                      xpv_err *err);
void xpv_krows_free(xpv_krows *rows);
/* The device of each track of in (malloc'ed, in->ntracks entries). */
int *xpv_track_devices(const xpv_analysis_input *in);

/* ---- launches.c ---- */

typedef struct {
    int64_t corr, ts_ns;
    uint32_t op; /* innermost enclosing cpu_op name, 0 unknown */
} xpv_launch_rec;

typedef struct xpv_launches {
    xpv_launch_rec *r; /* sorted by corr after build */
    size_t n, cap, limit;
    int64_t dropped; /* launches past the limit */
    int has_ops;     /* built with link_ops: r[i].op is set */
} xpv_launches;

struct xpv_step_list;
/* Collects LAUNCH events (corr >= 0) of the marked host tracks, at most
 * `limit`; with link_ops, also the innermost `cpu_op`/`Operator` event around
 * each launch on the same track. Without link_ops, only launches inside a
 * step of `steps` are kept (the others join nothing). */
int xpv_launches_build(xpv_launches *l, const xpv_analysis_input *in, const uint8_t *launch_tracks,
                       int link_ops, const struct xpv_step_list *steps, size_t limit, xpv_err *err);
/* The launch of a device event with id corr that started at ts_ns, or
 * NULL; where the id was launched more than once (traces joined end to
 * end, ids that restart), the latest launch at or before ts_ns, else the
 * first. *hint (any value at first) speeds up lookups of nearby ids. */
const xpv_launch_rec *xpv_launches_find(const xpv_launches *l, int64_t corr, int64_t ts_ns,
                                        size_t *hint);
void xpv_launches_free(xpv_launches *l);
/* 1 when in's capture answers the launch scans of the step join. */
int xpv_launches_needs_no_store(const xpv_analysis_input *in);

/* ---- steps.c ---- */

typedef struct {
    int64_t step, ts_ns, dur_ps;
    uint32_t name, track;
    uint8_t src;
} xpv_marker;

/* One device's window of a step, when devices mark their steps apart. */
typedef struct {
    int device;
    int64_t start_ps, end_ps;
} xpv_step_window;

/* A step: [start_ps, end_ps) covers the windows of every device that ran
 * it (the hull, for finding the step of an instant); when the devices mark
 * their own windows (nwin > 0), win[win_at .. win_at + nwin) of the list
 * are those windows, by device; else every device shares the step's. */
typedef struct {
    int64_t number;
    uint32_t name;
    int64_t start_ps, end_ps;
    size_t win_at, nwin;
} xpv_step;

typedef struct {
    xpv_marker *m;
    size_t n, cap;
    int64_t dropped;
    xpv_hindex module_counts; /* XLA_MODULE name id -> executions */
} xpv_step_markers;

void xpv_markers_init(xpv_step_markers *s);
void xpv_markers_add(xpv_step_markers *s, const xpv_event *ev);
void xpv_markers_free(xpv_step_markers *s);

typedef struct xpv_step_list {
    xpv_step *v; /* sorted by start; times in ps from base_ns */
    size_t n;
    xpv_step_window *win; /* per-device windows of the steps that have them */
    size_t nwin;
    int64_t dropped;         /* steps past XPV_MAX_STEPS (the latest ones) */
    int64_t base_ns;         /* origin of the ps times above: near the steps */
    int64_t profile_base_ns; /* origin of the steps table's start_ps: profiles.start_ns */
    const char *source;      /* annotation|profiler_step|steps_line|nvtx|tf|module|none */
} xpv_step_list;

#define XPV_MAX_STEPS 100000 /* the breakdown holds ~100 bytes per step and device */

/* By track id: tracks with XLA_MODULE events, with device work (kernels,
 * copies, memsets), with LAUNCH events. */
typedef struct {
    const uint8_t *module, *device, *launch;
} xpv_step_tracks;

/* Picks the marker source and builds the steps (module fallback included). */
int xpv_steps_build(xpv_step_markers *s, const xpv_analysis_input *in,
                    const xpv_step_tracks *tracks, int64_t base_ns, xpv_step_list *out,
                    xpv_err *err);

/* ---- module_runs.c ---- */

/* The host's runs of one XLA module and the launches inside each. */
typedef struct xpv_module_runs xpv_module_runs;
/* *out gets the runs of module (a string id) that host tracks annotate,
 * with the launches of launch_tracks inside them; NULL when none holds a
 * launch. -1 on a failed scan. */
int xpv_module_runs_find(xpv_module_runs **out, const xpv_analysis_input *in, uint32_t module,
                         const uint8_t *launch_tracks, int64_t base_ns, xpv_err *err);
/* The number, in start order on its thread, of the run whose window
 * holds the launch with this correlation id; -1 when none. */
int64_t xpv_module_runs_of(const xpv_module_runs *r, int64_t corr);
void xpv_module_runs_free(xpv_module_runs *r);
void xpv_step_list_free(xpv_step_list *l);
/* Index of the step whose window contains t (ps from base_ns), or -1.
 * hint (may be NULL; start it at 0) keeps the previous answer's place, so
 * callers walking times in order skip the binary search. */
long xpv_step_at(const xpv_step_list *s, int64_t t, size_t *hint);

/* Picoseconds from base_ns to ts_ns, clamped to +-2^51 ns (~26 days) so no
 * clock, however odd (a stray event at ts 0 beside epoch times), overflows
 * int64 picoseconds, even with a duration added. */
static inline int64_t xpv_ps_since(int64_t base_ns, int64_t ts_ns)
{
    const int64_t limit = (int64_t)1 << 51;
    int64_t d;
    if (__builtin_sub_overflow(ts_ns, base_ns, &d)) d = ts_ns > base_ns ? limit : -limit;
    if (d > limit) d = limit;
    if (d < -limit) d = -limit;
    return d * 1000;
}

/* How many steps start at or before t (steps are sorted by start); hint as
 * for xpv_step_at. */
size_t xpv_steps_started_by(const xpv_step_list *s, int64_t t, size_t *hint);

/* ---- step_breakdown.c ---- */

typedef struct {
    const xpv_step_list *steps;
    const uint8_t *device_tracks;      /* tracks whose device work counts */
    int xla_ops_are_work;              /* TPU: no kernels, XLA ops are the device work */
    const xpv_launches *launches;      /* may be empty */
    const xpv_hindex *collective;      /* from xpv_kstats_classify */
    const struct xpv_compile *compile; /* compile windows and work (may be NULL) */
    size_t interval_cap;               /* intervals held at once before a window is split */
    uint64_t split_pass_min; /* device events from which the first pass takes two threads */
    int64_t joined_by_corr, joined_by_time; /* out */
} xpv_breakdown_opts;

/* The breakdown in two phases, so that the first can run on its own thread
 * beside the kernel_stats rows: compute reads events only through
 * xpv_analysis_scan (never SQLite when in->db is NULL and the capture covers
 * its scans) and fills o->joined_by_*; write inserts the steps rows. */
typedef struct xpv_breakdown xpv_breakdown;
xpv_breakdown *xpv_breakdown_new(const xpv_analysis_input *in, xpv_breakdown_opts *o);
int xpv_breakdown_compute(xpv_breakdown *b, const xpv_analysis_input *in, xpv_err *err);
int xpv_breakdown_write(xpv_breakdown *b, const xpv_analysis_input *in, xpv_err *err);
void xpv_breakdown_free(xpv_breakdown *b);
/* 1 when the breakdown's scans can all be answered by in's capture. */
int xpv_breakdown_needs_no_store(const xpv_analysis_input *in);

#endif
