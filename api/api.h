/*
 * api.h — queries over the index, answered as JSON (or CSV) text.
 *
 * Every answer takes an open index connection and appends to an xpv_buf.
 * This layer knows SQL and JSON, never sockets: server/ maps routes to
 * these calls.
 *
 * Errors, one convention for every function of api/ (CONTRIBUTING.md
 * "Errors"):
 *  - an answer (it writes JSON or CSV into an xpv_buf for a route), or a
 *    part of one that decides its status (xpv_api_profile_state_get,
 *    xpv_api_window), returns the HTTP status (200, 400, 404, 422, 500);
 *    on anything but 200 the buffer holds `{"error": "..."}`, written by
 *    xpv_api_error;
 *  - anything else returns 0 or -1 with the xpv_err filled; one that
 *    counts returns the count or -1, one that builds returns the object or
 *    NULL, with the xpv_err filled likewise;
 *  - a lookup or question that can miss returns 1 found / 0 not found /
 *    -1 with the xpv_err filled (one that cannot fail returns 1 / 0);
 *    more outcomes than these are an enum, never -1.
 * The xpv_err may be NULL where the caller has a fallback and says why.
 */
#ifndef XPV_API_H
#define XPV_API_H

#include "../common/xpv_common.h"
#include <sqlite3.h>

/* One profile object (see README "REST API") for the profiles row `id`. */
int xpv_api_profile(sqlite3 *db, int64_t id, xpv_buf *out);
/* The "latest" profile: the newest readable one (indexed ok, or partial
 * with events: the pages show it with a banner), else the newest of all
 * (pending, failed), so a broken or unsupported capture never hides the
 * last readable one. Companion files are never it. Returns 1 with *id set,
 * 0 when there are no profiles, -1 on an index error. */
int xpv_api_latest_id(sqlite3 *db, int64_t *id, xpv_err *err);
/* `"profiles":N,"status_counts":{"ok":N,...}` (members, no braces) over
 * the profiles that are not companions. Returns 0 (out appended to), or -1
 * with err (out untouched). */
int xpv_api_status_counts(sqlite3 *db, xpv_buf *out, xpv_err *err);
/* The latest profile's object, 404 when there is none. */
int xpv_api_profile_latest(sqlite3 *db, xpv_buf *out);
/* `[profile, ...]` newest first. include_companions: also trace-JSON twins
 * of an xplane (hidden by default: the pair is shown once). */
int xpv_api_profile_array(sqlite3 *db, int include_companions, xpv_buf *out);
/* `{"profiles": [...]}` */
int xpv_api_profiles(sqlite3 *db, xpv_buf *out);

/* `{"profile", "status", "kind", "device", "kernel_time_us", "total_rows",
 * "devices": [..], "kernels": [{name, count, total_us, avg_us, median_us,
 * min_us, max_us, stddev_us, percent, device, op, grid, block,
 * registers_per_thread, shared_memory_bytes, occupancy_pct, category,
 * shapes}]}` from kernel_stats, or CSV with the same columns (plus kind).
 * "compile": {"included", "rows", "count", "us"} says what compile-time
 * work of the kind (XLA autotuning inside the capture) there is; the rows
 * and kernel_time_us leave it out unless with_compile, which adds its rows
 * (each with "compile": true|false) and percents of the sum of both.
 * "device_busy" (xpv_api_put_device_busy) is over all kinds and devices.
 * kind NULL: "kernel", or "xla_op" when the profile has no kernel rows. */
typedef struct {
    const char *kind; /* kernel|memcpy|memset|xla_op|hlo_category, NULL: default */
    int device;       /* -1: all devices combined */
    const char *sort; /* total|count|avg|max|name, NULL: total */
    int order_given, desc;
    int64_t limit; /* <= 0: all */
    int csv;
    int with_compile; /* compile=include: the compile-time rows too */
} xpv_kernels_query;
int xpv_api_kernels(sqlite3 *db, int64_t id, const xpv_kernels_query *q, xpv_buf *out);
int xpv_api_kernel_kind_valid(const char *kind);

/* How busy the devices that ran work were (device_busy.c): the devices the
 * profile lists, those with kernel, copy or memset time, and the mean over
 * the latter of their time over span_ps (each at most 1; has_fraction clear
 * when no device ran work or there is no span). XLA-op time is the work
 * where no device has kernel, copy or memset time (TPU). Returns 0, or -1
 * with err. */
typedef struct {
    int64_t listed, with_work;
    int has_fraction;
    double fraction;
} xpv_device_busy;
int xpv_api_device_busy_get(sqlite3 *db, int64_t id, int64_t span_ps, xpv_device_busy *out,
                            xpv_err *err);
/* `{"devices_listed", "devices_with_work", "busy_fraction"}` (null: unknown). */
void xpv_api_put_device_busy(xpv_buf *b, const xpv_device_busy *d);

/* `{"profile", "status", "profile_start_us", "device", "source", "devices":
 * [..], "steps": [{step, name, start_us, offset_us, duration_us, compute_us,
 * collective_us, memcpy_us, memset_us, idle_us, host_wait_us,
 * kernel_wait_us, idle_other_us, memcpy_h2d_us, memcpy_d2h_us,
 * memcpy_d2d_us, memcpy_other_us, compile_us, autotune_us,
 * overlap_compute_collective_us, overlap_copy_us}]}`; device -1 = all
 * devices (the mean of those that ran work). The device categories and
 * idle_us partition duration_us (docs/STEPS.md). start_us is absolute (the events answer's clock),
 * offset_us counts from profile_start_us. */
int xpv_api_steps(sqlite3 *db, int64_t id, int device, xpv_buf *out);

/* `{"profile", "status", "start_us", "end_us", "processes": [{pid, name,
 * sort_index, device, labels, threads: [{id, tid, name, sort_index, events,
 * start_us, end_us}]}]}` in display order. `id` is the track id used by
 * the events answer. */
int xpv_api_tracks(sqlite3 *db, int64_t id, xpv_buf *out);
/* The same, the derived device rows taken from cache (device_rows.h; NULL:
 * built for this answer). */
struct xpv_devrows_cache;
int xpv_api_tracks_cached(sqlite3 *db, int64_t id, struct xpv_devrows_cache *cache, xpv_buf *out);

/* The timeline window (see events.c):
 * `{"profile", "start_us", "end_us", "resolution", "pixel_us", "truncated",
 *   "tracks": [{"id", "max_depth",
 *               "events": [[start_us, dur_us, name, depth, "ref"], ...],
 *                 (dur_us 0: a zero-length slice; null: an instant, no duration)
 *               "spans":  [[start_us, end_us, count, name|-1, depth], ...]}],
 *   "names": ["...", ...]}`
 * name is an index into "names"; ref names the event for xpv_api_event.
 * Tracks with nothing in the window are left out. */
#define XPV_EVENTS_MAX_RESOLUTION 20000
typedef struct {
    int has_start, has_end; /* default: the profile's span */
    double start_us, end_us;
    int resolution;        /* pixels, <= 0: 1000 */
    const int64_t *tracks; /* NULL: every track */
    size_t ntracks;
    struct xpv_block_marks *marks;     /* optional cache (block_marks.h): long blocks decode less */
    struct xpv_devrows_cache *devrows; /* optional cache (device_rows.h) of the derived rows */
} xpv_events_query;

int xpv_api_events(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_buf *out);

/* One event by ref: `{"profile", "ref", "name", "cat", "ph", "kind",
 * "start_us", "dur_us", "end_us", "correlation", "step", "track", "pid",
 * "tid", "process", "thread", "device", "args": {...}, "flows": [{"ref",
 * "direction": "in"|"out", "via", "name", "start_us", "dur_us", "track",
 * "latency_us"}]}` (flows.h says which events are linked). */
int xpv_api_event(sqlite3 *db, int64_t id, int64_t block, uint32_t index, xpv_buf *out);

/* Events whose name holds q (case-insensitive), anywhere in the profile:
 * `{"profile", "query", "match_count", "offset", "truncated", "matches":
 * [{start_us, dur_us, track, name, ref}]}` — `limit` (<= 0: 200) matches
 * from the `offset`-th in time order (ties by ref), so every match can be
 * paged through; match_count counts them all, truncated says more follow.
 * Empty q: 400. Memory grows with offset + limit, hence the bound. */
#define XPV_SEARCH_MAX_LIMIT 1000
#define XPV_SEARCH_MAX_OFFSET 2000000
int xpv_api_search(sqlite3 *db, int64_t id, const char *q, int64_t offset, int limit, xpv_buf *out);

/* TensorBoard profile-plugin answers (tensorboard.c; the tools are in
 * tools.h): run names newest first; `[{"hostname"}]` of a run, led by
 * "ALL_HOSTS" when `tag` is a tool that merges hosts and the run has
 * several; the tools the run has data for. */
#define XPV_TB_ALL_HOSTS "ALL_HOSTS"
int xpv_api_tb_runs(sqlite3 *db, xpv_buf *out);
int xpv_api_tb_hosts(sqlite3 *db, const char *run, const char *tag, xpv_buf *out);
int xpv_api_tb_tools(sqlite3 *db, const char *run, xpv_buf *out);
/* The profile of a (run, host) (host NULL: any): 1 with *id, 0 when there
 * is none, -1 with err. */
int xpv_api_tb_profile(sqlite3 *db, const char *run, const char *host, int64_t *id, xpv_err *err);
/* The profiles of a run's hosts (tb_scope.c): every host (hosts NULL or "ALL_HOSTS"),
 * or those named in the comma-separated `hosts`. 1 with *ids (malloc'ed)
 * and *n, 0 when none matches, -1 with err. */
int xpv_api_tb_scope(sqlite3 *db, const char *run, const char *hosts, int64_t **ids, size_t *n,
                     xpv_err *err);

/* The XLA/HLO modules the profiles ran (hlo_modules.c): module_list's
 * `["name", ...]` over the profiles ids[0..n) (sorted, unique), and
 * /api/profiles/{id}/modules' `{"modules": [{"name", "program_id" (a string,
 * null unknown), "source" ("xla_modules": occurrences are executions on the
 * XLA Modules lines and the time their spans; "kernels": occurrences are the
 * device events carrying hlo_module and the time their device time),
 * "occurrences", "total_time_us"}]}` by name, then program. 200, 404 "No
 * Data" when the profiles name no module, or 500. */
int xpv_api_module_list(sqlite3 *db, const int64_t *ids, size_t n, xpv_buf *out);
int xpv_api_profile_modules(sqlite3 *db, int64_t id, xpv_buf *out);

/* Counter series of a window (counters.c), parameters as the events
 * answer's (tracks ignored): `{"profile", "start_us", "end_us",
 * "resolution", "pixel_us", "truncated", "counters": [{"track", "name",
 * "series", "device", "initial", "points": [[t_us, min, max, last, count],
 * ...]}]}`, one point per pixel holding samples (t_us its first sample),
 * initial the value before the window (null: none). */
int xpv_api_counters(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_buf *out);

/* The area selection (aggregate.c): slices of q->tracks (NULL: all) that
 * overlap the window, by name, clipped to it: `{"profile", "status",
 * "start_us", "end_us", "duration_us", "tracks", "rows": [{"name", "count",
 * "total_us", "self_us", "avg_us", "min_us", "max_us", "percent"}]}`, rows
 * by total descending; percent is the share of all rows' self time. */
int xpv_api_aggregate(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_buf *out);

/* Profile b against profile a (compare.c), either from its own index (the
 * CLI compares two directories; the server passes one db twice):
 * `{"a": profile, "b": profile, "device": -1, "step_time": {count,
 * median_us, mean_us, min_us, max_us, p10_us, p90_us, "durations_us": {"a":
 * [..], "b": [..]}}, "breakdown": {compute_us, collective_us, memcpy_us,
 * memset_us, idle_us, host_wait_us, kernel_wait_us, idle_other_us} (means
 * per step), "device_busy_fraction",
 * "device_time_us", "gate": {"metric": "median_step_time"|"device_time",
 * "value"}, "kernels"|"ops"|"memcpy"|"memset": {kind, total_us, names, new,
 * vanished, "rows": [{name, "status": "both"|"new"|"vanished", count,
 * total_us, avg_us}]}}` with rows by |total delta|, largest first. Every
 * figure is a delta `{"a", "b", "delta" (b - a), "relative" ((b - a) / a),
 * "sign", "direction" ("slower"|"faster" for times, "more"|"fewer" for
 * counts, "higher"|"lower" for the busy share, "same"; null unknown)}`.
 * Totals also come per step: "per_step": {"normalised", "steps": {a, b},
 * "note"}, "device_time_per_step_us", each table's and row's "per_step_us"
 * (rows then by |per-step delta|) and row "count_per_step"; "devices":
 * [{device, steps, median_us, mean_us, device_time_us,
 * device_time_per_step_us}] for the devices both sides have. A side that
 * is missing (404), pending (409), unread, empty or without device work
 * (422) is refused with {"error": "A (path) ..."}. */
int xpv_api_compare(sqlite3 *db_a, int64_t a, sqlite3 *db_b, int64_t b, xpv_buf *out);

/* Appends {"error": msg} and returns status. */
int xpv_api_error(xpv_buf *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Memory (memory_profile.c, memory_viewer.c, hlo_module_view.c; docs/MEMORY.md).
 * memory_profile: `{"profile", "status", "allocators": [{name,
 * source, summary, timeline, live_at_peak}]}` from the profile's allocator
 * events; 404 "No Data" without any. memory_viewer: module NULL gives
 * `{"modules": [{name, program_id, error, peak_memory_bytes, ...}]}`, else
 * one module's `{"module", "groups", "buffers", "heap"}`; 404 "No Data"
 * when the profile carries no HLO protos. hlo_module: NULL lists the
 * modules, else one module's computations and instructions with device
 * time; q keeps the instructions whose text holds it. */
struct xpv_hlo_cache;
int xpv_api_memory_profile(sqlite3 *db, int64_t id, xpv_buf *out);
int xpv_api_memory_viewer(sqlite3 *db, int64_t id, const char *module, xpv_buf *out);
int xpv_api_hlo_module(sqlite3 *db, int64_t id, const char *module, const char *q,
                       struct xpv_hlo_cache *hlo_cache, xpv_buf *out);

#endif
